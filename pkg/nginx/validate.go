package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
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
	// mimeRe, cipherRe and protocolRe are the items of gzip_types,
	// ssl_ciphers and ssl_protocols.
	mimeRe     = regexp.MustCompile(`^[a-z0-9][a-z0-9!#&^_.+-]*/[a-z0-9][a-z0-9!#&^_.+-]*$`)
	cipherRe   = regexp.MustCompile(`^([!+-]?[A-Za-z0-9][A-Za-z0-9_.-]*(\+[A-Za-z0-9][A-Za-z0-9_.-]*)*|@STRENGTH|@SECLEVEL=[0-5])$`)
	protocolRe = regexp.MustCompile(`^TLSv1(\.[123])?$`)
	// logVarRe is what may follow a $ in a log format: a variable name.
	logVarRe = regexp.MustCompile(`^(\{[a-z0-9_]+\}|[a-z0-9_]+([^A-Za-z0-9_]|$))`)
)

const maxSeconds = 24 * 3600

// headerNameRe is a request header name for real_ip_header.
var headerNameRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// cidrList validates pkg/model's canonical CIDR list (masked prefixes
// joined by commas, at most 1000) and returns its items; "" is none.
func cidrList(what, s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	items := strings.Split(s, ",")
	if len(items) > 1000 {
		return nil, invalid(what, s)
	}
	for _, it := range items {
		p, err := netip.ParsePrefix(it)
		if err != nil || p != p.Masked() || p.String() != it {
			return nil, invalid(what, s)
		}
	}
	return items, nil
}

func invalid(what, value string) error {
	return fmt.Errorf("%w: %s %q", ErrInvalidValue, what, value)
}

// nginxSize validates a size such as "1m", "512k" or "0".
func nginxSize(s config.Size) (string, error) {
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

// list checks the items of a list separated by sep against re and writes
// them again separated by sep.
func list(what, s, sep string, re *regexp.Regexp) (string, error) {
	items := strings.Split(s, sep)
	if s == "" || len(items) > 256 {
		return "", invalid(what, s)
	}
	for _, it := range items {
		if !re.MatchString(it) {
			return "", invalid(what, s)
		}
	}
	return strings.Join(items, sep), nil
}

// mimeTypes validates gzip_types: "*" or MIME types separated by spaces.
func mimeTypes(what, s string) (string, error) {
	if s == "*" {
		return s, nil
	}
	return list(what, s, " ", mimeRe)
}

// sslProtocols validates ssl_protocols: TLSv1 to TLSv1.3, spaces between.
func sslProtocols(s string) (string, error) { return list("ssl protocols", s, " ", protocolRe) }

// cipherList validates ssl_ciphers: OpenSSL list elements separated by ':'.
func cipherList(s string) (string, error) { return list("ssl ciphers", s, ":", cipherRe) }

// logFormat renders a log_format string: "" is the built-in format.
// It accepts printable ASCII where every $ starts a lower-case variable
// name, and escapes ' and \ for the single-quoted nginx string (pkg/model
// refuses both, and checks the names against an allow-list), with escape
// "json" or "none" (log-format-escape-json, -none) as nginx's escape=.
func logFormat(s string, escape string) (string, error) {
	if s == "" {
		s = defaultLogFormat
	}
	var b strings.Builder
	switch escape {
	case "json", "none":
		b.WriteString("escape=" + escape + " ")
	case "":
	default:
		return "", invalid("log format escape", escape)
	}
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x20 || c > 0x7e:
			return "", invalid("log format", s)
		case c == '$' && !logVarRe.MatchString(s[i+1:]):
			return "", invalid("log format", s)
		case c == '\'' || c == '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	b.WriteByte('\'')
	return b.String(), nil
}

// defaultLogFormat is the access log format when the ConfigMap sets none.
const defaultLogFormat = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" ` +
	`"$http_user_agent" $request_length $request_time [$proxy_upstream_name] $upstream_addr ` +
	`$upstream_response_length $upstream_response_time $upstream_status $req_id`
