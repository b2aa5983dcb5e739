package nginx

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/model"
)

// The validators below are how the few values that reach nginx.conf (global
// settings and options; nothing of an Ingress) get there. Each one accepts
// an allow-listed shape and returns the text to write; anything else is an
// error wrapping ErrInvalidValue. None of the accepted shapes can contain
// whitespace, quotes, `;`, `{`, `}`, `$`, `#` or `\`; luaString escapes
// every such byte instead.

var (
	sizeRe = regexp.MustCompile(`^(0|[1-9][0-9]{0,8})([kKmMgG]?)$`)
	fileRe = regexp.MustCompile(`^/[A-Za-z0-9/._+-]*$`)
)

const maxSeconds = 24 * 3600

func invalid(what, value string) error {
	return fmt.Errorf("%w: %s %q", ErrInvalidValue, what, value)
}

// nginxSize validates a size such as "1m", "512k" or "0".
func nginxSize(s model.Size) (string, error) {
	m := sizeRe.FindStringSubmatch(string(s))
	if m == nil {
		return "", invalid("size", string(s))
	}
	return m[1] + strings.ToLower(m[2]), nil
}

// seconds renders a timeout in whole seconds (1 s to 24 h).
func seconds(n int) (string, error) {
	if n < 1 || n > maxSeconds {
		return "", invalid("timeout in seconds", strconv.Itoa(n))
	}
	return strconv.Itoa(n) + "s", nil
}

// filePath validates a path written into nginx.conf (prefix, logs, Lua).
func filePath(p string) (string, error) {
	if !fileRe.MatchString(p) {
		return "", invalid("file path", p)
	}
	return p, nil
}

// luaString renders any string as a Lua string literal that contains
// nothing but letters, digits and a few punctuation characters: every other
// byte becomes a \ddd escape, so the literal cannot end the string, the
// init_by_lua_block or the nginx directive.
func luaString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._-/:@*+=", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "\\%03d", c)
	}
	b.WriteByte('"')
	return b.String()
}
