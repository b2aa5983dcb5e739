package gateway

import (
	"errors"
	"regexp"
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
)

// durationRE is a Gateway API Duration (GEP-2257).
var durationRE = regexp.MustCompile(`^([0-9]{1,5}(h|m|s|ms)){1,4}$`)

// errDuration: not a Gateway API Duration.
var errDuration = errors.New("is not a duration such as 1h, 10s or 500ms")

// timeouts returns a rule's timeouts in milliseconds; nil for none. A zero
// duration (no timeout) is the longest the data plane sets, as the
// specification asks of an implementation that cannot disable one; a
// backendRequest longer than the request is not valid.
func (t *route) timeouts(where string, in *gatewayv1.HTTPRouteTimeouts) (*config.Timeouts, bool) {
	if in == nil || in.Request == nil && in.BackendRequest == nil {
		return nil, true
	}
	var out config.Timeouts
	for _, f := range []struct {
		name string
		d    *gatewayv1.Duration
		ms   *int
	}{{"request", in.Request, &out.RequestMillis}, {"backendRequest", in.BackendRequest, &out.BackendRequestMillis}} {
		if f.d == nil {
			continue
		}
		ms, err := millis(string(*f.d))
		if err != nil {
			t.problem("%s: timeouts.%s %q %v; rule left out", where, f.name, *f.d, err)
			return nil, false
		}
		*f.ms = ms
	}
	if out.RequestMillis > 0 && out.BackendRequestMillis > out.RequestMillis {
		t.problem("%s: timeouts.backendRequest is longer than timeouts.request; rule left out", where)
		return nil, false
	}
	return &out, true
}

// millis is a Duration in milliseconds, 1 to config.MaxTimeoutMillis (0
// and anything longer are the longest).
func millis(d string) (int, error) {
	if !durationRE.MatchString(d) {
		return 0, errDuration
	}
	v, err := time.ParseDuration(d)
	if err != nil {
		return 0, errDuration
	}
	ms := v.Milliseconds()
	if ms <= 0 || ms > config.MaxTimeoutMillis {
		return config.MaxTimeoutMillis, nil
	}
	return int(ms), nil
}
