package gateway

import (
	"errors"
	"fmt"
	"regexp"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// corsOriginRE is what the data plane takes as an allowed origin: the
// API's pattern, the port at most 65535 checked apart.
var corsOriginRE = regexp.MustCompile(`^(\*|https?://((\*\.)?([a-zA-Z0-9-]+\.)*[a-zA-Z0-9-]+|\*)(:([0-9]{1,5}))?)$`)

// Why a CORS filter is not served.
var (
	errCORSOrigin = errors.New("allowOrigins: must be * or scheme://host[:port], the host possibly starting with *")
	errCORSMaxAge = errors.New("maxAge must be 0 to 86400 seconds")
)

// routeCORS validates a CORS filter.
func routeCORS(c *gatewayv1.HTTPCORSFilter) (*config.RouteCORS, error) {
	if c == nil {
		return nil, errFilterEmpty
	}
	out := &config.RouteCORS{AllowCredentials: c.AllowCredentials != nil && *c.AllowCredentials, MaxAge: int(c.MaxAge)}
	if out.MaxAge < 0 || out.MaxAge > 86400 {
		return nil, errCORSMaxAge
	}
	for _, o := range c.AllowOrigins {
		if m := corsOriginRE.FindStringSubmatch(string(o)); m == nil || m[6] != "" && !validPort(m[6]) {
			return nil, fmt.Errorf("%q: %w", o, errCORSOrigin)
		}
		out.AllowOrigins = append(out.AllowOrigins, string(o))
	}
	for _, list := range []struct {
		name string
		in   []string
		out  *[]string
	}{{"allowMethods", methodNames(c.AllowMethods), &out.AllowMethods}, {"allowHeaders", headerNames(c.AllowHeaders), &out.AllowHeaders},
		{"exposeHeaders", headerNames(c.ExposeHeaders), &out.ExposeHeaders}} {
		for _, v := range list.in {
			if v != "*" && !intent.ValidHeaderName(v) {
				return nil, fmt.Errorf("%s: %q %w", list.name, v, errHeaderName)
			}
			*list.out = append(*list.out, v)
		}
	}
	return out, nil
}

func validPort(p string) bool {
	_, err := intent.ParseIntRange(p, 1, 65535)
	return err == nil
}

func methodNames(ms []gatewayv1.HTTPMethodWithWildcard) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = string(m)
	}
	return out
}

func headerNames(hs []gatewayv1.HTTPHeaderName) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = string(h)
	}
	return out
}
