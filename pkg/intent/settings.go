package intent

import "github.com/ingress-sync/ingress-sync/pkg/config"

// CanarySettings is what the canary annotations of one Ingress say.
type CanarySettings struct {
	Enabled bool
	// set lists the other canary annotations accepted, in sorted order.
	Set []string
	// spec holds the values; Backend and Ingress are set per Location.
	Spec config.Canary
}

// Settings is what the annotations of one Ingress say, parsed and
// validated once when the Ingress is stored.
type Settings struct {
	// location holds the per-location settings, SSLRedirect excluded.
	Location config.LocationSettings
	// sslRedirect is ssl-redirect when set; forceSSLRedirect is
	// force-ssl-redirect=true; forceSSLRedirectOff is
	// force-ssl-redirect=false, which opts out of the ConfigMap's.
	SSLRedirect         *bool
	ForceSSLRedirect    bool
	ForceSSLRedirectOff bool
	// useRegex is use-regex=true.
	UseRegex bool
	// sslPassthrough is ssl-passthrough=true (see streams.go).
	SSLPassthrough bool
	// allowlistInvalid: allowlist-source-range did not parse (the routes
	// answer 503; whitelist-source-range is not read).
	AllowlistInvalid bool
	// canary holds the canary annotations of a canary Ingress (canary=true);
	// nil otherwise (see applyCanary and buildCanaries).
	Canary *CanarySettings
	// appRoot is app-root: requests for "/" on the Ingress's hosts are
	// redirected there. fromToWWW is from-to-www-redirect=true.
	AppRoot   string
	FromToWWW bool
	// redirect and cors collect annotations combined by finishRouting.
	Redirect redirectInput
	CORS     corsInput
	// balancing holds the backend-level settings, when any is set.
	Balancing *Balancing
	// affinityCanaryLegacy is affinity-canary-behavior=legacy: a canary
	// Ingress's backend does not take the main backend's affinity.
	AffinityCanaryLegacy bool
	// upstream holds server-alias, service-upstream and custom-headers
	// (see applyUpstream).
	Upstream upstreamInput
	// errors holds custom-http-errors and disable-proxy-intercept-errors,
	// errorService the default-backend annotation (see applyErrors).
	Errors       config.CustomErrors
	ErrorService string
	// proxyBufferSize is proxy-buffer-size (see checkBufferSize).
	ProxyBufferSize config.Size
	// auth holds the basic auth annotations (see applyAuth).
	Auth AuthSettings
	// limit holds the rate and connection limits (see applyLimit).
	Limit LimitSettings
	// extAuth holds the external auth annotations (see applyExtAuth).
	ExtAuth ExtAuthSettings
	// proxySSL holds the backend TLS annotations (see applyProxySSL).
	ProxySSL ProxySSLSettings
	// BackendTLS: a backend of the entry has a BackendTLS (Gateway API
	// BackendTLSPolicies), whose profiles the build decides across hosts.
	BackendTLS bool
	// clientAuth holds the auth-tls annotations (see applyClientAuth).
	ClientAuth clientAuthInput
	// mirror is the mirror-* annotations' copy of the Ingress's requests
	// (a URL mirror); nil for none.
	Mirror *config.Mirror
	// ModSecurity holds the ModSecurity annotations; nil when none is set
	// (see ResolveModSecurity).
	ModSecurity *ModSecurityInput
	// tracing holds the OpenTelemetry annotations (see TracingSettings).
	Tracing TracingSettings
	// snippets lists the *-snippet annotations present, sorted.
	Snippets []string
	// problems are the reasons of rejected annotations, sorted.
	Problems []string
}

// Balancing is the backend-level part of an Ingress's annotations.
type Balancing struct {
	LoadBalance string
	HashBy      string
	// subsetSize is upstream-hash-by-subset-size when
	// upstream-hash-by-subset is true (and hashBy set); 0 otherwise.
	SubsetSize int
	Affinity   *config.Affinity
}

func (b *Balancing) Equal(o *Balancing) bool {
	if b.LoadBalance != o.LoadBalance || b.HashBy != o.HashBy || b.SubsetSize != o.SubsetSize ||
		(b.Affinity == nil) != (o.Affinity == nil) {
		return false
	}
	return b.Affinity == nil || *b.Affinity == *o.Affinity
}

// AuthSettings collects the auth annotations of one Ingress.
type AuthSettings struct {
	Type, Secret, SecretType, Realm string
	// satisfyAny is satisfy=any: the allow-list or the credentials.
	SatisfyAny bool
	// requested is set when auth-type or auth-secret is present; err says
	// why the annotations cannot be applied.
	Requested bool
	Err       string
}

// ClientAuthSettings collects the auth-tls annotations of one Ingress.
type clientAuthInput struct {
	Secret, Verify, ErrorPage, MatchCN string
	Depth                              int
	PassCert                           bool
	// requested is set by auth-tls-secret; others names the other auth-tls
	// annotations present; err says why they cannot be applied.
	Requested bool
	Others    []string
	Err       string
}

// ExtAuthSettings collects the external auth annotations of one Ingress.
type ExtAuthSettings struct {
	URL, Host, Method, Signin, SigninParam, RequestRedirect, CacheKey, ProxySetHeaders string
	ResponseHeaders                                                                    []string
	Durations                                                                          []config.AuthCacheDuration
	AlwaysSetCookie                                                                    bool
	// requested is set by auth-url; others lists the other annotations
	// present; err says why they cannot be applied.
	Requested bool
	Others    []string
	Err       string
	// globalOff is enable-global-auth=false.
	GlobalOff bool
}

// ExternalAuth makes the ExternalAuth of valid values.
func (in *ExtAuthSettings) ExternalAuth() *config.ExternalAuth {
	ea := &config.ExternalAuth{URL: in.URL, Host: in.Host, Method: in.Method, ResponseHeaders: in.ResponseHeaders,
		RequestRedirect: in.RequestRedirect, CacheKey: in.CacheKey, AlwaysSetCookie: in.AlwaysSetCookie}
	if in.Signin != "" {
		ea.Signin = SigninWithRedirect(in.Signin, in.SigninParam)
	}
	if in.CacheKey != "" {
		ea.CacheDurations = in.Durations
		if ea.CacheDurations == nil {
			ea.CacheDurations, _ = ParseAuthCacheDurations("")
		}
	}
	return ea
}

// LimitSettings collects the limit annotations of one Ingress (see
// finishLimit).
type LimitSettings struct {
	RateLimit  config.RateLimit
	BurstSet   bool
	AllowNewer bool // limit-allowlist was read: it wins over limit-whitelist
	Any        bool
	// rateSet and rateAfterSet: limit-rate and limit-rate-after are
	// present, so the ConfigMap's do not apply (even when they are 0).
	RateSet, RateAfterSet bool
}

// ProxySSLSettings collects the proxy-ssl-* annotations of one Ingress.
type ProxySSLSettings struct {
	Secret, Name, Protocols, Ciphers string
	Verify, ServerName               bool
	Depth                            int
	// requested: proxy-ssl-secret is set, proxy-ssl-verify is on or a
	// value is invalid; err says why they cannot be applied.
	Requested bool
	Err       string
	// others lists the annotations other than the Secret that were set.
	Others []string
}

// RedirectSettings and CORSSettings collect annotations that only mean something
// together; they are combined once every annotation is read.
type redirectInput struct {
	Permanent, Temporal         string
	PermanentCode, TemporalCode int
}

type corsInput struct {
	Enabled     bool
	Origins     []string
	AnyOrigin   bool
	Methods     string
	Headers     string
	Expose      string
	Credentials *bool
	MaxAge      *int
}

// UpstreamSettings is what the upstream annotations of one Ingress say.
type upstreamInput struct {
	// aliases are the valid server-alias names, sorted and unique.
	Aliases []string
	// serviceUpstream is service-upstream when set.
	ServiceUpstream *bool
	// customHeaders is the custom-headers reference as written (checked
	// against the Ingress's namespace by Build).
	CustomHeaders string
}
