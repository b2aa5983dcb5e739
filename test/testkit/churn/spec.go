package churn

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// ErrInvalidSpec is returned (wrapped) for a Spec or Config out of range.
var ErrInvalidSpec = errors.New("churn: invalid spec")

// Spec is the shape of the generated cluster and of its churn. Every base
// Ingress i (app-<i>) has its own Service and EndpointSlice in namespace
// <NamespacePrefix>-<i mod Namespaces>, host app-<i>.<Domain>, and, for one
// Ingress in TLSEvery, a TLS Secret.
type Spec struct {
	Namespaces      int
	Ingresses       int
	TLSEvery        int // 0: no TLS
	MinEndpoints    int // endpoint changes keep a Service between these
	MaxEndpoints    int
	Addresses       []string // endpoint address pool; more than MaxEndpoints
	Port            int32    // endpoint (container) port
	NamespacePrefix string
	Domain          string
	IngressClass    string // spec.ingressClassName of every Ingress
	// Routes is the kind of the route objects: events.KindIngress (the
	// default, also for "") or events.KindHTTPRoute, HTTPRoutes attached
	// to one Gateway (GatewayName in the first namespace, one HTTP
	// listener on port 80 taking routes of every namespace) of a
	// GatewayClass of ours (GatewayClassName). HTTPRoutes have no TLS.
	Routes events.Kind
	// MaxExtraIngresses bounds the Ingresses the churn creates besides the
	// base ones (only those are updated and deleted; base Ingresses keep
	// routing, so that probes never see a removed host).
	MaxExtraIngresses int
	// IngressCreatesOnly makes the Ingress churn create new Ingresses only
	// (no update, no delete), without the MaxExtraIngresses bound.
	IngressCreatesOnly bool

	// Rates are changes per second of each class; 0 turns a class off.
	EndpointRate, IngressRate, SecretRate float64
	// Events bounds the number of changes and Duration the time of the
	// last one's due offset; 0 is no bound, and at least one is needed.
	Events   int
	Duration time.Duration
	Seed     uint64
}

// DefaultSpec is the workload of the main scenario: 1k Ingresses over 10
// namespaces, 1 in 10 with TLS, 1 to 4 endpoints each, 200 endpoint changes
// per second for 30 seconds.
func DefaultSpec() Spec {
	return Spec{
		Namespaces: 10, Ingresses: 1000, TLSEvery: 10, MinEndpoints: 1, MaxEndpoints: 4,
		Addresses: AddressRange(1, 240), Port: 8080, NamespacePrefix: "churn", Domain: "churn.test",
		IngressClass: "ingress-sync", MaxExtraIngresses: 100,
		EndpointRate: 200, Duration: 30 * time.Second, Seed: 1,
	}
}

// AddressRange returns 198.18.0.<from> to 198.18.0.<to>: the benchmarking
// range that internal/netns routes to lo inside its namespace only.
func AddressRange(from, to int) []string {
	out := make([]string, 0, max(0, to-from+1))
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("198.18.0.%d", i))
	}
	return out
}

// ParseAddresses reads a comma-separated list of IPv4 addresses and ranges
// ("198.18.0.1-198.18.0.240").
func ParseAddresses(s string) ([]string, error) {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			hi = lo
		}
		from, err1 := netip.ParseAddr(lo)
		to, err2 := netip.ParseAddr(hi)
		if err := errors.Join(err1, err2); err != nil || !from.Is4() || !to.Is4() || to.Less(from) {
			return nil, fmt.Errorf("%w: address range %q", ErrInvalidSpec, part)
		}
		for a := from; ; a = a.Next() {
			out = append(out, a.String())
			if a == to || len(out) > 1<<16 {
				break
			}
		}
	}
	if len(out) > 1<<16 {
		return nil, fmt.Errorf("%w: more than 65536 addresses", ErrInvalidSpec)
	}
	return out, nil
}

// Validate reports every field out of range.
func (s Spec) Validate() error {
	var errs []error
	check := func(bad bool, format string, args ...any) {
		if bad {
			errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidSpec}, args...)...))
		}
	}
	check(s.Namespaces < 1 || s.Ingresses < 1, "need at least one namespace and one Ingress (%d, %d)", s.Namespaces, s.Ingresses)
	check(s.TLSEvery < 0 || s.MaxExtraIngresses < 0, "negative TLSEvery or MaxExtraIngresses")
	check(s.MinEndpoints < 1 || s.MaxEndpoints < s.MinEndpoints,
		"need 1 <= min endpoints (%d) <= max endpoints (%d)", s.MinEndpoints, s.MaxEndpoints)
	check(len(s.Addresses) <= s.MaxEndpoints, "%d addresses for up to %d endpoints: need more", len(s.Addresses), s.MaxEndpoints)
	check(s.Port < 1 || s.Port > 65535, "port %d", s.Port)
	check(s.NamespacePrefix == "" || s.Domain == "" || s.IngressClass == "", "empty namespace prefix, domain or ingress class")
	check(s.EndpointRate < 0 || s.IngressRate < 0 || s.SecretRate < 0, "negative rate")
	check(s.Events < 0 || s.Duration < 0, "negative bound")
	check(s.Events == 0 && s.Duration == 0 && s.rated(), "churn needs a bound: events or duration")
	check(s.SecretRate > 0 && s.TLSEvery == 0, "secret rotation needs TLS Ingresses (TLSEvery > 0)")
	check(s.IngressRate > 0 && s.MaxExtraIngresses == 0 && !s.IngressCreatesOnly, "Ingress churn needs MaxExtraIngresses > 0")
	check(s.Routes != "" && s.Routes != events.KindIngress && s.Routes != events.KindHTTPRoute, "routes of kind %q", s.Routes)
	check(s.Routes == events.KindHTTPRoute && (s.TLSEvery > 0 || s.SecretRate > 0), "HTTPRoutes have no TLS: TLSEvery and SecretRate must be 0")
	return errors.Join(errs...)
}

// rated reports whether any class of change is on.
func (s Spec) rated() bool { return s.EndpointRate > 0 || s.IngressRate > 0 || s.SecretRate > 0 }
