package model

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// DefaultGlobal returns the settings used when the controller ConfigMap is
// absent or does not set a key; the values are those of ingress-nginx.
func DefaultGlobal() Global {
	return Global{
		SSLRedirect:         true,
		ProxyConnectTimeout: 5,
		ProxyReadTimeout:    60,
		ProxySendTimeout:    60,
		ProxyBodySize:       "1m",
		UpstreamKeepalive:   320,
	}
}

const maxKeepalive = 100000

// parseGlobal reads the controller ConfigMap over the defaults. A key with
// an invalid value keeps its default and yields a reason; unknown keys are
// reported as unsupported.
func parseGlobal(cm *corev1.ConfigMap) (Global, []string) {
	g := DefaultGlobal()
	if cm == nil || len(cm.Data) == 0 {
		return g, nil
	}
	keys := make([]string, 0, len(cm.Data))
	for k := range cm.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var problems []string
	for _, k := range keys {
		v := cm.Data[k]
		err := checkForbidden(v, false)
		if err == nil {
			err = g.set(k, v)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("key %s=%s: %v; default kept", k, quoteValue(v), err))
		}
	}
	return g, problems
}

// set parses one ConfigMap key into g.
func (g *Global) set(k, v string) error {
	var err error
	switch k {
	case "ssl-redirect":
		g.SSLRedirect, err = keep(g.SSLRedirect)(parseBool(v))
	case "use-forwarded-headers":
		g.UseForwardedHeaders, err = keep(g.UseForwardedHeaders)(parseBool(v))
	case "allow-snippet-annotations":
		g.AllowSnippets, err = keep(g.AllowSnippets)(parseBool(v))
	case "proxy-connect-timeout":
		g.ProxyConnectTimeout, err = keep(g.ProxyConnectTimeout)(parseTimeout(v))
	case "proxy-read-timeout":
		g.ProxyReadTimeout, err = keep(g.ProxyReadTimeout)(parseTimeout(v))
	case "proxy-send-timeout":
		g.ProxySendTimeout, err = keep(g.ProxySendTimeout)(parseTimeout(v))
	case "proxy-body-size":
		g.ProxyBodySize, err = keep(g.ProxyBodySize)(parseSize(v))
	case "upstream-keepalive-connections":
		g.UpstreamKeepalive, err = keep(g.UpstreamKeepalive)(parseIntRange(v, 0, maxKeepalive))
	default:
		return errUnsupported
	}
	return err
}

// keep returns a function that yields old instead of a parse result that
// failed, so that a bad value leaves the default in place.
func keep[T any](old T) func(T, error) (T, error) {
	return func(v T, err error) (T, error) {
		if err != nil {
			return old, err
		}
		return v, nil
	}
}

func parseBool(v string) (bool, error) {
	b, err := parseBoolPtr(v)
	if err != nil {
		return false, err
	}
	return *b, nil
}

// rendered returns the part of g that nginx.conf holds: a change of it is
// a reload. The other fields act through the routes Build makes.
func (g Global) rendered() Global {
	g.SSLRedirect, g.AllowSnippets = false, false
	return g
}
