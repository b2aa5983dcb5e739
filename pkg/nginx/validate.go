package nginx

import (
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/model"
)

// The validators below are the only way a value of a Configuration reaches
// nginx.conf. Each one accepts an allow-listed shape and returns the text to
// write (built from the parsed value where there is one, not from the input);
// anything else is an error wrapping ErrInvalidValue. None of the accepted
// shapes can contain whitespace, quotes, `;`, `{`, `}`, `$`, `#` or `\`,
// except where a validator builds them itself (regex server names, rewrite
// captures).

var (
	dnsLabel   = `[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?`
	hostRe     = regexp.MustCompile(`^` + dnsLabel + `(\.` + dnsLabel + `)*$`)
	wildHostRe = regexp.MustCompile(`^\*(\.` + dnsLabel + `)+$`)
	// pathRe: RFC 3986 path characters without the ones nginx or the shell
	// give a meaning to (`;`, `$`, `'`, `(`, `)`, `{`, `}`, quotes, space).
	pathRe        = regexp.MustCompile(`^/[A-Za-z0-9/._~%!*+,=:@&-]*$`)
	backendNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$`)
	sizeRe        = regexp.MustCompile(`^(0|[1-9][0-9]{0,8})([kKmMgG]?)$`)
	fileRe        = regexp.MustCompile(`^/[A-Za-z0-9/._+-]*$`)
	checksumRe    = regexp.MustCompile(`^[A-Za-z0-9:+/=._-]{0,256}$`)
)

const maxSeconds = 24 * 3600

func invalid(what, value string) error {
	return fmt.Errorf("%w: %s %q", ErrInvalidValue, what, value)
}

// serverName returns the server_name argument for a Server.Hostname: "_",
// an exact lowercase DNS name, or for "*.example.com" a regex that matches
// exactly one label (nginx's own "*.example.com" matches several).
func serverName(host string) (string, error) {
	if len(host) > 253 {
		return "", invalid("hostname (longer than 253)", host)
	}
	switch {
	case host == "_":
		return "_", nil
	case hostRe.MatchString(host):
		return host, nil
	case wildHostRe.MatchString(host):
		rest := strings.ReplaceAll(host[2:], ".", `\.`)
		return `"~^[^.]+\.` + rest + `$"`, nil
	}
	return "", invalid("hostname", host)
}

// locationPath validates a Location.Path.
func locationPath(p string) (string, error) {
	if len(p) > 1024 || !pathRe.MatchString(p) {
		return "", invalid("path", p)
	}
	return p, nil
}

// backendName validates a Backend name, rendered in `set $proxy_upstream_name`.
func backendName(n string) (string, error) {
	if !backendNameRe.MatchString(n) {
		return "", invalid("backend name", n)
	}
	return n, nil
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

// cidr parses an address or a prefix and renders its canonical form.
func cidr(s string) (string, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked().String(), nil
	}
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		return a.String(), nil
	}
	return "", invalid("CIDR", s)
}

// rewriteTarget validates a rewrite-target: an absolute path without
// captures, query or fragment.
func rewriteTarget(t string) (string, error) {
	if len(t) > 1024 || !pathRe.MatchString(t) {
		return "", invalid("rewrite target", t)
	}
	return t, nil
}

// backendProtocol maps the backend-protocol annotation to the pass directive.
func backendProtocol(p string) (string, error) {
	switch strings.ToUpper(p) {
	case "", "HTTP":
		return "proxy_pass http://upstream_balancer", nil
	case "HTTPS":
		return "proxy_pass https://upstream_balancer", nil
	case "GRPC":
		return "grpc_pass grpc://upstream_balancer", nil
	case "GRPCS":
		return "grpc_pass grpcs://upstream_balancer", nil
	}
	return "", invalid("backend protocol", p)
}

// filePath validates a path written into nginx.conf (prefix, logs, Lua).
func filePath(p string) (string, error) {
	if !fileRe.MatchString(p) {
		return "", invalid("file path", p)
	}
	return p, nil
}

// checksum validates the configuration checksum rendered into init_by_lua.
func checksum(s string) (string, error) {
	if !checksumRe.MatchString(s) {
		return "", invalid("checksum", s)
	}
	return s, nil
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

// regexQuote escapes a validated path for a PCRE inside an nginx quoted
// string. Only the characters pathRe admits need care.
func regexQuote(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if strings.IndexByte(`.*+`, p[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(p[i])
	}
	return b.String()
}
