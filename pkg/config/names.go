package config

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

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

// ServerKey names the Server of hostname on nginx port port (Server.Port;
// 0 for nginx's own ports): the hostname itself on nginx's own ports,
// "<port>:<hostname>" on a Gateway listener's. It is the name of the
// Server's route table in Lua, of its checksum entry, and what a
// Certificate's Hosts list for a Gateway HTTPS listener.
func ServerKey(port int, hostname string) string {
	if port == 0 {
		return hostname
	}
	return strconv.Itoa(port) + ":" + hostname
}

// SplitServerKey is the inverse of ServerKey.
func SplitServerKey(key string) (port int, hostname string) {
	p, h, ok := strings.Cut(key, ":")
	if !ok {
		return 0, key
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return 0, key
	}
	return n, h
}

// Key is s's ServerKey.
func (s *Server) Key() string { return ServerKey(s.Port, s.Hostname) }

// CompareServers orders Servers by Port (nginx's own first), then by
// Hostname (CompareHostnames: the default server of each port first).
func CompareServers(a, b *Server) int {
	return cmp.Or(cmp.Compare(a.Port, b.Port), CompareHostnames(a.Hostname, b.Hostname))
}

// CompareServerKeys orders ServerKeys as CompareServers orders their
// Servers.
func CompareServerKeys(a, b string) int {
	pa, ha := SplitServerKey(a)
	pb, hb := SplitServerKey(b)
	return cmp.Or(cmp.Compare(pa, pb), CompareHostnames(ha, hb))
}

// The ports a Gateway listener may be served on (Listener.Port).
const (
	MinListenerPort = 1024
	MaxListenerPort = 65535
)

// ErrListenerPort is returned (wrapped) by ValidListenerPort.
var ErrListenerPort = errors.New("invalid listener port")

// ValidListenerPort checks the nginx port of a Gateway listener: from
// MinListenerPort to MaxListenerPort, and none of reserved (nginx's own
// HTTP, HTTPS and status ports, the syncer's metrics port, the TCP and
// UDP services' ports). The build checks every Listener with it, and the
// renderer of nginx.conf again before a port reaches a listen directive.
func ValidListenerPort(port int, reserved []int) error {
	switch {
	case port < MinListenerPort || port > MaxListenerPort:
		return fmt.Errorf("%w: %d is not from %d to %d", ErrListenerPort, port, MinListenerPort, MaxListenerPort)
	case slices.Contains(reserved, port):
		return fmt.Errorf("%w: %d is one of nginx's or the syncer's own ports", ErrListenerPort, port)
	}
	return nil
}
