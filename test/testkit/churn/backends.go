package churn

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
	"github.com/ingress-sync/ingress-sync/test/testkit/netns"
)

// ErrOutsideNetns is returned when traffic would go to the benchmarking
// range outside the private network namespace that routes it to lo.
var ErrOutsideNetns = errors.New("churn: addresses in 198.18.0.0/15 are only used inside a private network namespace (internal/netns): run `churn scenario`, or inside such a namespace")

var benchmarkingRange = netip.MustParsePrefix("198.18.0.0/15")

// CheckAddresses refuses pool addresses of the benchmarking range unless
// this process runs in a namespace made by internal/netns: outside it,
// probes through nginx would send traffic to them on the real network.
func CheckAddresses(addrs []string) error {
	if netns.Inside() {
		return nil
	}
	for _, a := range addrs {
		if ip, err := netip.ParseAddr(a); err == nil && benchmarkingRange.Contains(ip) {
			return fmt.Errorf("%w (%s)", ErrOutsideNetns, a)
		}
	}
	return nil
}

// Backends are echo servers, one per address of the pool, each named by
// its address so that a probe knows which endpoint answered.
type Backends []*echo.Server

// StartBackends starts an echo server on every address at port.
func StartBackends(addrs []string, port int32) (Backends, error) {
	if err := CheckAddresses(addrs); err != nil {
		return nil, err
	}
	var out Backends
	for _, a := range addrs {
		s, err := echo.Start(a, net.JoinHostPort(a, strconv.Itoa(int(port))))
		if err != nil {
			return nil, errors.Join(err, out.Close())
		}
		out = append(out, s)
	}
	return out, nil
}

// Close stops every server.
func (b Backends) Close() error {
	var errs []error
	for _, s := range b {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}
