package model

import "github.com/ingress-sync/ingress-sync/pkg/config"

// canaryInput is what the canary annotations of one Ingress say.
type canaryInput struct {
	enabled bool
	// set lists the other canary annotations accepted, in sorted order.
	set []string
	// spec holds the values; Backend and Ingress are set per Location.
	spec config.Canary
}

// ingressAnnotations is what the annotations of one Ingress say, parsed and
// validated once when the Ingress is stored.
type ingressAnnotations struct {
	// location holds the per-location settings, SSLRedirect excluded.
	location config.LocationSettings
	// sslRedirect is ssl-redirect when set; forceSSLRedirect is
	// force-ssl-redirect=true; forceSSLRedirectOff is
	// force-ssl-redirect=false, which opts out of the ConfigMap's.
	sslRedirect         *bool
	forceSSLRedirect    bool
	forceSSLRedirectOff bool
	// useRegex is use-regex=true.
	useRegex bool
	// sslPassthrough is ssl-passthrough=true (see streams.go).
	sslPassthrough bool
	// allowlistInvalid: allowlist-source-range did not parse (the routes
	// answer 503; whitelist-source-range is not read).
	allowlistInvalid bool
	// canary holds the canary annotations of a canary Ingress (canary=true);
	// nil otherwise (see applyCanary and buildCanaries).
	canary *canaryInput
	// appRoot is app-root: requests for "/" on the Ingress's hosts are
	// redirected there. fromToWWW is from-to-www-redirect=true.
	appRoot   string
	fromToWWW bool
	// redirect and cors collect annotations combined by finishRouting.
	redirect redirectInput
	cors     corsInput
	// balancing holds the backend-level settings, when any is set.
	balancing *balancing
	// affinityCanaryLegacy is affinity-canary-behavior=legacy: a canary
	// Ingress's backend does not take the main backend's affinity.
	affinityCanaryLegacy bool
	// upstream holds server-alias, service-upstream and custom-headers
	// (see applyUpstream).
	upstream upstreamInput
	// errors holds custom-http-errors and disable-proxy-intercept-errors,
	// errorService the default-backend annotation (see applyErrors).
	errors       config.CustomErrors
	errorService string
	// proxyBufferSize is proxy-buffer-size (see checkBufferSize).
	proxyBufferSize config.Size
	// auth holds the basic auth annotations (see applyAuth).
	auth authInput
	// limit holds the rate and connection limits (see applyLimit).
	limit limitInput
	// extAuth holds the external auth annotations (see applyExtAuth).
	extAuth extAuthInput
	// proxySSL holds the backend TLS annotations (see applyProxySSL).
	proxySSL proxySSLInput
	// clientAuth holds the auth-tls annotations (see applyClientAuth).
	clientAuth clientAuthInput
	// snippets lists the *-snippet annotations present, sorted.
	snippets []string
	// problems are the reasons of rejected annotations, sorted.
	problems []string
}

// balancing is the backend-level part of an Ingress's annotations.
type balancing struct {
	loadBalance string
	hashBy      string
	// subsetSize is upstream-hash-by-subset-size when
	// upstream-hash-by-subset is true (and hashBy set); 0 otherwise.
	subsetSize int
	affinity   *config.Affinity
}

func (b *balancing) equal(o *balancing) bool {
	if b.loadBalance != o.loadBalance || b.hashBy != o.hashBy || b.subsetSize != o.subsetSize ||
		(b.affinity == nil) != (o.affinity == nil) {
		return false
	}
	return b.affinity == nil || *b.affinity == *o.affinity
}

// authInput collects the auth annotations of one Ingress.
type authInput struct {
	typ, secret, secretType, realm string
	// satisfyAny is satisfy=any: the allow-list or the credentials.
	satisfyAny bool
	// requested is set when auth-type or auth-secret is present; err says
	// why the annotations cannot be applied.
	requested bool
	err       string
}

// clientAuthInput collects the auth-tls annotations of one Ingress.
type clientAuthInput struct {
	secret, verify, errorPage, matchCN string
	depth                              int
	passCert                           bool
	// requested is set by auth-tls-secret; others names the other auth-tls
	// annotations present; err says why they cannot be applied.
	requested bool
	others    []string
	err       string
}

// extAuthInput collects the external auth annotations of one Ingress.
type extAuthInput struct {
	url, host, method, signin, signinParam, requestRedirect, cacheKey, proxySetHeaders string
	responseHeaders                                                                    []string
	durations                                                                          []config.AuthCacheDuration
	alwaysSetCookie                                                                    bool
	// requested is set by auth-url; others lists the other annotations
	// present; err says why they cannot be applied.
	requested bool
	others    []string
	err       string
	// globalOff is enable-global-auth=false.
	globalOff bool
}

// externalAuth makes the ExternalAuth of valid values.
func (in *extAuthInput) externalAuth() *config.ExternalAuth {
	ea := &config.ExternalAuth{URL: in.url, Host: in.host, Method: in.method, ResponseHeaders: in.responseHeaders,
		RequestRedirect: in.requestRedirect, CacheKey: in.cacheKey, AlwaysSetCookie: in.alwaysSetCookie}
	if in.signin != "" {
		ea.Signin = signinWithRedirect(in.signin, in.signinParam)
	}
	if in.cacheKey != "" {
		ea.CacheDurations = in.durations
		if ea.CacheDurations == nil {
			ea.CacheDurations, _ = ParseAuthCacheDurations("")
		}
	}
	return ea
}

// limitInput collects the limit annotations of one Ingress (see
// finishLimit).
type limitInput struct {
	rl         config.RateLimit
	burstSet   bool
	allowNewer bool // limit-allowlist was read: it wins over limit-whitelist
	any        bool
	// rateSet and rateAfterSet: limit-rate and limit-rate-after are
	// present, so the ConfigMap's do not apply (even when they are 0).
	rateSet, rateAfterSet bool
}

// proxySSLInput collects the proxy-ssl-* annotations of one Ingress.
type proxySSLInput struct {
	secret, name, protocols, ciphers string
	verify, serverName               bool
	depth                            int
	// requested: proxy-ssl-secret is set, proxy-ssl-verify is on or a
	// value is invalid; err says why they cannot be applied.
	requested bool
	err       string
	// others lists the annotations other than the Secret that were set.
	others []string
}

// redirectInput and corsInput collect annotations that only mean something
// together; they are combined once every annotation is read.
type redirectInput struct {
	permanent, temporal         string
	permanentCode, temporalCode int
}

type corsInput struct {
	enabled     bool
	origins     []string
	anyOrigin   bool
	methods     string
	headers     string
	expose      string
	credentials *bool
	maxAge      *int
}

// upstreamInput is what the upstream annotations of one Ingress say.
type upstreamInput struct {
	// aliases are the valid server-alias names, sorted and unique.
	aliases []string
	// serviceUpstream is service-upstream when set.
	serviceUpstream *bool
	// customHeaders is the custom-headers reference as written (checked
	// against the Ingress's namespace by Build).
	customHeaders string
}
