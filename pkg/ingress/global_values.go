package ingress

import (
	"maps"
	"slices"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"errors"
	"fmt"
	"regexp"
	"strings"
)

// The list values of the controller ConfigMap: each parser accepts a
// strict grammar and returns the canonical form that pkg/nginx checks again
// and writes.

var (
	// mimeRe is a MIME type as RFC 6838 restricts its names, lower case.
	mimeRe = regexp.MustCompile(`^[a-z0-9][a-z0-9!#&^_.+-]{0,126}/[a-z0-9][a-z0-9!#&^_.+-]{0,126}$`)
	// cipherRe is one element of an OpenSSL cipher list: an optional
	// operator (! - +), then names joined by '+' ("ECDHE+AESGCM"), or a
	// command ("@STRENGTH", "@SECLEVEL=2").
	cipherRe = regexp.MustCompile(`^([!+-]?[A-Za-z0-9][A-Za-z0-9_.-]*(\+[A-Za-z0-9][A-Za-z0-9_.-]*)*|@STRENGTH|@SECLEVEL=[0-5])$`)
)

// sslProtocols are the protocols ssl-protocols may name, in order. SSLv2
// and SSLv3 are refused: OpenSSL 3 has neither.
var sslProtocols = []string{"TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"}

// splitList splits a list value at spaces and, when commas, at commas,
// dropping empty items; it refuses more than maxListItems.
func splitList(v string, commas bool) ([]string, error) {
	f := strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == '\t' || commas && r == ',' })
	if len(f) == 0 {
		return nil, errors.New("is empty")
	}
	if len(f) > intent.MaxListItems {
		return nil, fmt.Errorf("has more than %d items", intent.MaxListItems)
	}
	return f, nil
}

// parseGzipTypes parses gzip-types: MIME types separated by spaces (or
// commas), or "*" for every type. The result is lower case, without
// duplicates, in the given order.
func parseGzipTypes(v string) (string, error) {
	items, err := splitList(v, true)
	if err != nil {
		return "", err
	}
	seen := make(map[string]bool, len(items))
	out := make([]string, 0, len(items))
	for _, t := range items {
		if t == "*" {
			return "*", nil
		}
		t = strings.ToLower(t)
		if !mimeRe.MatchString(t) {
			return "", fmt.Errorf("%s is not a MIME type such as text/css", intent.Quote(t))
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return strings.Join(out, " "), nil
}

// parseSSLProtocols parses ssl-protocols: TLSv1, TLSv1.1, TLSv1.2 and
// TLSv1.3 (any case) separated by spaces; the result is in ascending order.
func parseSSLProtocols(v string) (string, error) {
	items, err := splitList(v, false)
	if err != nil {
		return "", err
	}
	on := make([]bool, len(sslProtocols))
	for _, p := range items {
		i := indexFold(sslProtocols, p)
		if i < 0 {
			return "", fmt.Errorf("%s is not one of %s", intent.Quote(p), strings.Join(sslProtocols, ", "))
		}
		on[i] = true
	}
	var out []string
	for i, p := range sslProtocols {
		if on[i] {
			out = append(out, p)
		}
	}
	return strings.Join(out, " "), nil
}

func indexFold(list []string, s string) int {
	for i, x := range list {
		if strings.EqualFold(x, s) {
			return i
		}
	}
	return -1
}

// parseSSLCiphers parses ssl-ciphers: an OpenSSL cipher list, elements
// separated by ':' (or spaces or commas, as OpenSSL takes them), at least
// one of which adds ciphers by known names (see opensslCiphers). The
// result separates them by ':'.
func parseSSLCiphers(v string) (string, error) {
	items := strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ' ' || r == ',' })
	if len(items) == 0 {
		return "", errors.New("is empty")
	}
	if len(items) > intent.MaxListItems {
		return "", fmt.Errorf("has more than %d items", intent.MaxListItems)
	}
	known := false
	for _, c := range items {
		if !cipherRe.MatchString(c) {
			return "", fmt.Errorf("%s is not an OpenSSL cipher list element", intent.Quote(c))
		}
		known = known || config.AddsKnownCiphers(c)
	}
	if !known {
		return "", errors.New("adds no cipher by a name OpenSSL knows (such as HIGH or ECDHE-RSA-AES128-GCM-SHA256)")
	}
	return strings.Join(items, ":"), nil
}

// logVariables are the nginx variables log-format-upstream may use, besides
// the families of logVariablePrefixes: those the nginx of ingress-sync
// defines (its core, upstream, SSL, HTTP/2, gzip, proxy and realip
// modules, and ingress-sync's own). Anything else would fail nginx -t, or
// is ingress-nginx's own (such as $namespace or $service_name) and does not
// exist here.
var logVariables = toSet(
	"args", "binary_remote_addr", "body_bytes_sent", "bytes_sent", "connection", "connection_requests",
	"connection_time", "content_length", "content_type", "document_uri", "host", "hostname", "https",
	"is_args", "msec", "nginx_version", "pid", "pipe", "proxy_protocol_addr", "proxy_protocol_port",
	"query_string", "remote_addr", "remote_port", "remote_user", "request", "request_id", "request_length",
	"request_method", "request_time", "request_uri", "scheme", "server_addr", "server_name", "server_port",
	"server_protocol", "status", "time_iso8601", "time_local", "uri", "document_root", "request_completion",
	"upstream_addr", "upstream_bytes_received", "upstream_bytes_sent", "upstream_connect_time",
	"upstream_header_time", "upstream_response_length", "upstream_response_time", "upstream_status",
	"ssl_cipher", "ssl_protocol", "ssl_server_name", "ssl_session_reused", "ssl_session_id", "ssl_curves",
	"ssl_client_verify", "ssl_client_s_dn", "ssl_client_i_dn", "ssl_early_data",
	"http2", "gzip_ratio", "proxy_host", "proxy_port", "proxy_add_x_forwarded_for",
	"realip_remote_addr", "realip_remote_port",
	// ingress-sync's: the backend, the forwarded headers and ingress-nginx's
	// $req_id (an alias of $request_id).
	"proxy_upstream_name", "best_http_host", "pass_access_scheme", "pass_server_port", "forwarded_for", "req_id",
)

// geoIP2LogVariables are the $geoip2_* variables of use-geoip2: nginx.conf
// defines those a log format uses whether or not their database is there
// (empty without it), so that a format never fails nginx -t.
var geoIP2LogVariables = config.GeoIP2VariableNames()

// logVariablePrefixes are the variable families of any suffix.
var logVariablePrefixes = []string{"http_", "sent_http_", "upstream_http_", "cookie_", "arg_", "upstream_cookie_"}

// maxLogFormatLen bounds log-format-upstream.
const maxLogFormatLen = 4096

// parseLogFormat parses log-format-upstream. It accepts printable ASCII
// except ' \ and ` as literal text, and variables $name or ${name} whose
// name is in logVariables or starts with one of logVariablePrefixes
// followed by [a-z0-9_] (lower case: nginx would read any letter as part of the name). A $ that does not start such a variable is refused
// (nginx has no literal $ in log_format). pkg/nginx writes the result in a
// single-quoted string, escaped.
func parseLogFormat(v string) (string, error) { return parseLogFormatOf(v, knownLogVariable) }

// parseStreamLogFormat parses log-format-stream as parseLogFormat, with
// the variables of the stream module.
func parseStreamLogFormat(v string) (string, error) {
	return parseLogFormatOf(v, func(name string) bool { return streamLogVariables[name] })
}

// streamLogVariables are the variables of nginx's stream module (core,
// proxy, upstream, ssl_preread) a stream log format may use.
var streamLogVariables = toSet(
	"binary_remote_addr", "bytes_received", "bytes_sent", "connection", "hostname", "msec", "nginx_version",
	"pid", "protocol", "proxy_protocol_addr", "proxy_protocol_port", "proxy_protocol_server_addr",
	"proxy_protocol_server_port", "remote_addr", "remote_port", "server_addr", "server_port",
	"session_time", "status", "time_iso8601", "time_local", "ssl_preread_server_name",
	"ssl_preread_protocol", "upstream_addr", "upstream_bytes_sent", "upstream_bytes_received",
	"upstream_connect_time", "upstream_first_byte_time", "upstream_session_time",
)

// parseLogFormatOf checks a log format whose variables known accepts.
func parseLogFormatOf(v string, known func(string) bool) (string, error) {
	if len(v) > maxLogFormatLen {
		return "", fmt.Errorf("longer than %d characters", maxLogFormatLen)
	}
	if strings.TrimSpace(v) == "" {
		return "", errors.New("is empty")
	}
	for i := 0; i < len(v); {
		c := v[i]
		switch {
		case c == '$':
			n, err := logVariable(v[i:], known)
			if err != nil {
				return "", err
			}
			i += n
			continue
		case c < 0x20 || c > 0x7e:
			return "", errors.New("contains a control or non-ASCII character")
		case c == '\'' || c == '\\' || c == '`':
			return "", fmt.Errorf("contains %q", c)
		}
		i++
	}
	return v, nil
}

// logVariable checks the variable at the start of s ("$name..." or
// "${name}...") and returns its length.
func logVariable(s string, known func(string) bool) (int, error) {
	braced := strings.HasPrefix(s, "${")
	start := 1
	if braced {
		start = 2
	}
	end := start
	for end < len(s) && isVarChar(s[end]) {
		end++
	}
	name := s[start:end]
	if strings.ToLower(name) != name {
		return 0, fmt.Errorf("variable $%s: names must be lower case", name)
	}
	if braced {
		if end >= len(s) || s[end] != '}' {
			return 0, errors.New("has a ${ without its }")
		}
		end++
	}
	if name == "" {
		return 0, errors.New("has a $ that does not start a variable (nginx has no literal $ in log formats)")
	}
	if !known(name) {
		return 0, fmt.Errorf("variable $%s is not available in ingress-sync", name)
	}
	return end, nil
}

// isVarChar reports the bytes nginx takes into a variable name.
func isVarChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func knownLogVariable(name string) bool {
	if logVariables[name] || geoIP2LogVariables[name] {
		return true
	}
	for _, p := range logVariablePrefixes {
		if len(name) > len(p) && strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// LogFormatVariables returns, sorted, the variable names log-format-upstream
// may use besides the families of any suffix ($http_*, $sent_http_*,
// $upstream_http_*, $cookie_*, $arg_*, $upstream_cookie_*).
func LogFormatVariables() []string { return slices.Sorted(maps.Keys(logVariables)) }

func toSet(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
