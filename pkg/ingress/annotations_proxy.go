package ingress

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"errors"
	"fmt"
	"strings"
)

// MaxNextUpstreamTries is the largest proxy-next-upstream-tries kept as
// given; 0 (nginx's "no limit") and larger values become it. The syncer's
// --max-tries (at most 100) bounds the attempts in any case.
const MaxNextUpstreamTries = 100

// errPerRoute is the reason of proxy annotations that are nginx directives
// without variables: nginx.conf, the same for every Ingress, cannot give
// them a value per route.
var errPerRoute = fmt.Errorf("%w per Ingress: an nginx directive that takes no variables cannot vary per route (nginx.conf is the same for every Ingress); set it in the controller ConfigMap where it has a key; left out", errUnsupported)

// applyProxy parses the proxy behaviour annotations; ok is false when name
// is none of them.
func applyProxy(a *intent.Settings, name, v string) (ok bool, err error) {
	p := a.Location.Proxy
	if p == nil {
		p = &config.ProxySettings{}
	}
	switch name {
	case "proxy-buffering":
		p.Buffering, err = parseOnOffValue(v)
	case "proxy-request-buffering":
		p.RequestBuffering, err = parseOnOffValue(v)
	case "proxy-http-version":
		if v != "1.0" && v != "1.1" {
			return true, errors.New("must be 1.0 or 1.1")
		}
		p.HTTPVersion = v
	case "proxy-next-upstream-tries":
		var n int
		if n, err = intent.ParseIntRange(v, 0, 1<<30); err == nil {
			p.NextUpstreamTries = cappedTries(n, p.NextUpstreamTries)
		}
	case "proxy-next-upstream":
		err = setNextUpstream(p, v)
	case "proxy-redirect-from":
		p.RedirectFrom, err = parseProxyURL(v)
	case "proxy-redirect-to":
		p.RedirectTo, err = parseProxyURL(v)
	case "proxy-cookie-domain":
		p.CookieDomainFrom, p.CookieDomainTo, err = parseCookieRewrite(v)
	case "proxy-cookie-path":
		p.CookiePathFrom, p.CookiePathTo, err = parseCookieRewrite(v)
	case "enable-access-log":
		var on bool
		on, err = parseBool(v)
		p.NoAccessLog = err == nil && !on
	case "enable-rewrite-log":
		if _, err = parseBool(v); err == nil {
			err = fmt.Errorf("%w: ingress-sync rewrites paths in Lua, not with nginx's rewrite directive, so nginx's rewrite log has nothing to show; left out", errUnsupported)
		}
	case "proxy-buffer-size":
		a.ProxyBufferSize, err = parseSize(v)
		return true, err
	case "proxy-busy-buffers-size", "proxy-max-temp-file-size", "client-body-buffer-size":
		if _, err = parseSize(v); err == nil {
			err = errPerRoute
		}
	case "proxy-buffers-number", "proxy-next-upstream-timeout":
		if _, err = intent.ParseIntRange(v, 0, 1<<30); err == nil {
			err = errPerRoute
		}
	default:
		return applyErrors(a, name, v)
	}
	if err == nil {
		a.Location.Proxy = p
	}
	return true, err
}

// cappedTries is proxy-next-upstream-tries n (0: no limit) unless
// proxy-next-upstream: off already made it 1.
func cappedTries(n, prev int) int {
	if prev == 1 {
		return 1
	}
	if n == 0 || n > MaxNextUpstreamTries {
		return MaxNextUpstreamTries
	}
	return n
}

// setNextUpstream applies proxy-next-upstream. nginx.conf retries on
// "error timeout" for every route; "off" means one attempt. Other
// conditions cannot vary per route and are left out.
func setNextUpstream(p *config.ProxySettings, v string) error {
	if !intent.NextUpstreamRE.MatchString(v) {
		return errors.New("must be nginx proxy_next_upstream conditions such as \"error timeout\" or off")
	}
	fields := strings.Fields(v)
	for _, f := range fields {
		if f == "off" {
			p.NextUpstreamTries = 1
			return nil
		}
	}
	for _, f := range fields {
		if f != "error" && f != "timeout" {
			return fmt.Errorf("condition %s %w", f, errPerRoute)
		}
	}
	return nil
}

// parseOnOffValue is parseOnOff (the ConfigMap's parser) as "on" or "off".
func parseOnOffValue(v string) (string, error) {
	on, err := parseOnOff(v)
	if err != nil {
		return "", err
	}
	if on {
		return "on", nil
	}
	return "off", nil
}

func parseProxyURL(v string) (string, error) {
	if !intent.ProxyURLRE.MatchString(v) {
		return "", errors.New("must be a URL or path of letters, digits and -._~/:,?&=")
	}
	return v, nil
}

// parseCookieRewrite parses "off" (no rewrite) or "<from> <to>".
func parseCookieRewrite(v string) (from, to string, err error) {
	if !intent.CookieRewriteRE.MatchString(v) {
		return "", "", errors.New("must be off or two values, <from> <to>, of letters, digits and -._~/:")
	}
	if v == "off" {
		return "", "", nil
	}
	f := strings.Fields(v)
	return f[0], f[1], nil
}

// finishProxy drops an empty ProxySettings and resolves proxy-redirect-*:
// as in ingress-nginx, from "off" or "default" (which names
// upstream_balancer, a host no backend redirects to) and to "off" mean no
// rewrite, and to without from means nothing.
func finishProxy(a *intent.Settings) {
	p := a.Location.Proxy
	if p == nil {
		return
	}
	if p.RedirectFrom == "" || p.RedirectFrom == "off" || p.RedirectFrom == "default" || p.RedirectTo == "off" || p.RedirectTo == "" {
		p.RedirectFrom, p.RedirectTo = "", ""
	}
	if *p == (config.ProxySettings{}) {
		a.Location.Proxy = nil
	}
}

// parseHTTPErrorsList is parseHTTPErrors for the ConfigMap: the codes
// joined by ",".
func parseHTTPErrorsList(v string) (string, error) {
	codes, err := intent.ParseHTTPErrors(v)
	if err != nil {
		return "", err
	}
	return intent.JoinCodes(codes), nil
}

// applyErrors parses the error page annotations; ok is false when name is
// none of them.
func applyErrors(a *intent.Settings, name, v string) (ok bool, err error) {
	e := a.Errors
	switch name {
	case "custom-http-errors":
		if e.Codes, err = intent.ParseHTTPErrors(v); err == nil && e.Codes == nil {
			e.Codes = []int{}
		}
	case "disable-proxy-intercept-errors":
		e.NoIntercept, err = parseBool(v)
	case "default-backend":
		if !intent.IsDNSLabel(v) {
			return true, errors.New("must be the name of a Service of the Ingress's namespace")
		}
		a.ErrorService = v
		return true, nil
	default:
		return false, nil
	}
	if err == nil {
		a.Errors = e
	}
	return true, err
}

// proxyField is the setter of a ConfigMap key that is also a proxy
// annotation: the annotation's parser, into Global.Proxy (see
// withProxyDefaults); a value equal to ingress-nginx's default is not kept,
// so that routes at the defaults stay in location /.
func proxyField(name string) setter {
	return func(g *config.Global, v string) error {
		p := g.Proxy
		a := intent.Settings{Location: config.LocationSettings{Proxy: &p}}
		if _, err := applyProxy(&a, name, v); err != nil {
			return err
		}
		d := defaultProxy
		clear := func(v *string, def string) {
			if *v == def {
				*v = ""
			}
		}
		clear(&p.RequestBuffering, d.RequestBuffering)
		clear(&p.HTTPVersion, d.HTTPVersion)
		if p.NextUpstreamTries == d.NextUpstreamTries {
			p.NextUpstreamTries = 0
		}
		for _, off := range []*string{&p.RedirectFrom, &p.RedirectTo} {
			clear(off, "off")
		}
		if p.CookieDomainFrom == "off" {
			p.CookieDomainFrom, p.CookieDomainTo = "", ""
		}
		if p.CookiePathFrom == "off" {
			p.CookiePathFrom, p.CookiePathTo = "", ""
		}
		g.Proxy = p
		return nil
	}
}

// defaultProxy is what ingress-nginx's proxy defaults come to here.
var defaultProxy = config.ProxySettings{RequestBuffering: "on", HTTPVersion: "1.1", NextUpstreamTries: 3}
