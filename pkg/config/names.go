package config

import "strings"

// DefaultServerName is the Hostname of the server answering requests for
// unknown hosts and Ingress rules without a host.
const DefaultServerName = "_"

// MatchHost reports whether host is served by pattern under Ingress v1
// rules: an exact name matches itself, and "*.foo.com" matches "bar.foo.com"
// but neither "foo.com" nor "baz.bar.foo.com" (the wildcard is exactly one
// label). Renderers must honour this: nginx's own "*.foo.com" matches any
// depth.
func MatchHost(pattern, host string) bool {
	suffix, ok := strings.CutPrefix(pattern, "*")
	if !ok {
		return pattern == host
	}
	label, found := strings.CutSuffix(host, suffix)
	return found && label != "" && !strings.Contains(label, ".")
}
