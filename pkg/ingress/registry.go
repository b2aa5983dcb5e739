package ingress

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Status says how ingress-sync treats an ingress-nginx annotation or
// ConfigMap key.
type Status int

// The statuses of the registry.
const (
	// StatusUnknown: not a name ingress-nginx v1.15 reads.
	StatusUnknown Status = iota
	// StatusSupported: applied with ingress-nginx's behaviour.
	StatusSupported
	// StatusSupportedWithDifference: applied, with a documented difference
	// (the entry's Note).
	StatusSupportedWithDifference
	// StatusRefused: a snippet, never applied; an Ingress carrying one is
	// not served at all.
	StatusRefused
	// StatusNotSupported: ignored with a Problem (the Note says why).
	StatusNotSupported
)

// String is the status as migrate-check and docs/migration.md print it.
func (s Status) String() string {
	switch s {
	case StatusSupported:
		return "supported"
	case StatusSupportedWithDifference:
		return "supported with a documented difference"
	case StatusRefused:
		return "refused"
	case StatusNotSupported:
		return "not supported"
	}
	return "unknown"
}

// MarshalText makes a Status a JSON string for scripts: supported,
// supported_with_difference, refused, not_supported or unknown.
func (s Status) MarshalText() ([]byte, error) {
	switch s {
	case StatusSupportedWithDifference:
		return []byte("supported_with_difference"), nil
	case StatusNotSupported:
		return []byte("not_supported"), nil
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads what MarshalText writes.
func (s *Status) UnmarshalText(b []byte) error {
	for c := StatusUnknown; c <= StatusNotSupported; c++ {
		if t, _ := c.MarshalText(); string(t) == string(b) {
			*s = c
			return nil
		}
	}
	return fmt.Errorf("unknown status %q", b)
}

// Behaves reports whether a name of this status behaves as in
// ingress-nginx (only StatusSupported does).
func (s Status) Behaves() bool { return s == StatusSupported }

// RegistryEntry is one ingress-nginx annotation (name without the
// nginx.ingress.kubernetes.io/ prefix) or ConfigMap key.
type RegistryEntry struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	// Note is the difference (StatusSupportedWithDifference), the reason
	// (StatusNotSupported, StatusRefused), or "".
	Note string `json:"note,omitempty"`
	// Issue is the project issue that brought the name or tracks its
	// difference, or 0: for contributors, never shown to users (notes are
	// written for people who cannot see the project's tracker).
	Issue int `json:"-"`
	// Sample is a valid value in ingress-nginx's format: what the registry
	// test parses to check the status against parseAnnotations and
	// parseGlobal.
	Sample string `json:"-"`
	// parse is the parser that claims the annotation (annotations_groups.go),
	// nil for one that is not parsed.
	parse annotationParser
}

// by says which parser claims the annotation.
func (e RegistryEntry) by(p annotationParser) RegistryEntry {
	e.parse = p
	return e
}

// Issues that bring names not supported yet.
const (
	issueMigration     = 12 // routing and traffic annotations and keys
	issueAccessControl = 13 // auth, allow/deny lists and real IP, limits, upstream TLS, client certificates
	issueStreams       = 15 // ssl-passthrough, TCP and UDP services
)

// Notes shared by several entries.
const (
	noteTimeout     = "whole seconds from 1 to 86400, as the ConfigMap's keys; ingress-nginx takes any integer (a value such as 60s falls back to the default in both, here with a Problem)"
	noteRegex       = "host-wide and ordered as in ingress-nginx; a path that is not valid RE2 syntax with the same meaning in PCRE (lookarounds, backreferences, possessive quantifiers) is left out with a Problem; see docs/migration.md"
	noteSourceRange = "matched against $remote_addr: the client address from X-Forwarded-For only from proxies of proxy-real-ip-cidr (which is empty by default, where ingress-nginx trusts 0.0.0.0/0), or the PROXY protocol's; a list that cannot be applied makes the Ingress's routes answer 503 (fail closed), where ingress-nginx ignores it"
	noteBlock       = "checked in Lua before any route (403), pushed to the routes (no reload); a pattern must be RE2 syntax with the same meaning in PCRE, as regex paths; entries are split at commas, as ingress-nginx does"
	noteTrust       = "trust is explicit: the forwarded header sets the client address only from proxies of proxy-real-ip-cidr, which is empty by default (ingress-nginx: 0.0.0.0/0)"
	noteAuthType    = "basic is verified in Lua (apr1, bcrypt, {SHA}, {SSHA}, MD5/SHA-256/SHA-512/DES crypt); digest in Lua too, as the auth_digest module ingress-nginx builds in with its defaults (RFC 2617, MD5, qop=auth; htdigest lines user:realm:HA1, only auth-realm's users; a nonce is first used within 60 s, then serves 10 s and 20 requests, a repeated nc is refused, then stale=true; 5 failed sign-ins refuse the client address for 300 s, per $remote_addr: behind a proxy, set the real-IP keys or every client shares its address; credentials that verify clear the count, and a verified request's response carries Authentication-Info with rspauth, as the module's); with auth-secret-type auth-map a digest value is realm:HA1; auth-secret without auth-type answers 503, where ingress-nginx serves the route unprotected"
	noteSatisfy     = "combines basic and external auth with the allow-list (any: a client the allow-list admits needs no credentials nor auth request; with both basic and external auth, a client it does not admit needs both); an invalid value on an Ingress with basic auth answers 503 (fail closed)"
	noteAuthSecret  = "a missing Secret, a Secret without the key auth, another namespace's Secret, or a line that is not user:hash or has a hash format nginx could not verify makes the Ingress's routes answer 503 (ingress-nginx: 503 for the first three, the line skipped or a 500 for the others); a user with an empty hash can never sign in (401, as ingress-nginx)"
	noteErrors      = "each distinct list is a set of fixed locations in nginx.conf (nginx's error_page codes cannot vary per route): the first Ingress with a new list reloads nginx once; beyond 64 lists, and on routes with a backend TLS profile, the route intercepts every 4xx and 5xx of its backend, and a code it does not list gets nginx's own page; 499 is refused (nginx never answers it)"
	noteHTTPLevel   = "one nginx.conf setting for every route (a change reloads): the directive takes no variables, so the annotation of the same name cannot change it per route"
	noteSnippet     = "raw nginx configuration is never applied: an Ingress carrying it is not served at all"
	// ModSecurity (annotations_modsecurity.go).
	noteModSecEngine  = "Debian's ModSecurity v3 and OWASP Core Rule Set 3.3; DetectionOnly unless modsecurity-snippet says SecRuleEngine On; the request is inspected (headers and body), not the response, and matches are logged to nginx's error log (no audit log); a change never reloads nginx but for a new rules profile"
	noteModSecSnippet = "parsed, not applied as text: only SecRuleEngine, SecRuleRemoveById, SecRuleRemoveByTag, SecRequestBodyLimit and SecRequestBodyAccess, each validated; any other directive is refused with a Problem and the routes that run ModSecurity answer 503"
	noteOtel          = "a server span per request made in Lua and exported by the syncer over OTLP/gRPC (see docs/tracing.md): its name and attributes are the nginx module's, the span of a Prefix path is named after the path as written (the module: the location, such as /foo/); on or off per route without a reload"
	noteOneContext    = "all hosts share one SSL context: per-host TLS settings need their own context"
	noteFCGI          = "FastCGI backends are not supported: the balancer proxies HTTP and gRPC only"
	noteNginxOwn      = "the syncer owns this part of nginx.conf"
	noteLog           = "the access log goes to stdout, or where access-log-path says, or nowhere (disable-access-log); the error log goes to stderr, at error-log-level"
	// noteAccessLogPath: the access log destinations (global_logs.go).
	noteAccessLogPath = "the access log goes to nginx's stdout by default, which the syncer passes on as its own stdout (ingress-nginx's default /var/log/nginx/access.log, a symlink to stdout in its image, means the same); another value must be /dev/stderr or an absolute file path of plain names (letters, digits, . _ - and /, outside /dev, /proc and /sys); syslog: is refused; the error log always goes to stderr"
)

// Differences of the auth-tls annotations (client certificates).
const (
	noteAuthTLSSecret    = "per host as ingress-nginx (the oldest Ingress of the host whose auth-tls annotations can be applied decides; every path of the host is verified, whichever Ingress defined it), in Lua during the handshake of the host's SNI name (ngx.ssl.verify_client) in the one SSL context, without a reload; a request whose Host is not the host its connection's SNI name was verified for answers 421 (nginx: 421 between servers that differ in ssl_verify_client; here also between hosts with the same CA), a TLS session is resumed only for the host it was made for, and an open connection whose host's CA changed answers 421; plain HTTP requests are refused as requests without a certificate (ingress-nginx serves them unverified); fail closed: a missing Secret, another namespace's, one without ca.crt (ingress-nginx then silently disables the verification), unparsable certificates, a ca.crl not signed by ca.crt, or any invalid auth-tls value makes the Ingress's routes answer 503 (ingress-nginx: 403 for the whole host, or the Ingress rejected); ca.crl is applied to the client's own certificate only, by serial number, and its validity dates are not checked (nginx checks every certificate of the chain and fails them all once the CRL expired)"
	noteAuthTLSValue     = "an invalid value makes the Ingress's routes answer 503 with a Problem (ingress-nginx falls back to on and 1)"
	noteAuthTLSMatchCN   = "a regular expression with the same meaning in RE2 and nginx's PCRE, matched against the subject DN as ingress-nginx (403); an invalid one makes the Ingress's routes answer 503 with a Problem (ingress-nginx rejects the Ingress)"
	noteAuthTLSErrorPage = "a URL or host and path: a 302 to it, as nginx's error_page; a path: served from the host's routes as nginx's error_page internal redirect (GET, no query string), over TLS only (plain HTTP answers 400); a named location (@name) makes the Ingress's routes answer 503: nginx.conf has no location of an Ingress"
	noteAuthTLSPassCert  = "with false, a client's own ssl-client-cert request header is removed (ingress-nginx passes it to the backend)"
)

// noteLimitReq is the difference of limit-rps and limit-rpm.
// Notes of the external auth annotations and keys.
const (
	noteAuthURL       = "sent by Lua (one fixed location, no body, the request's headers and ingress-nginx's X-Original-*, X-Auth-Request-Redirect; X-Forwarded-Host and -Port set, not passed); 2xx passes, 401 and 403 are answered, anything else, the auth service down or slower than --auth-timeout included, is 500; variables in the path and query only, from a fixed list ($host, $request_uri, $escaped_request_uri, $http_*, $cookie_*, ...); host names resolved with --resolver (default: /etc/resolv.conf); timeouts are --auth-timeout's, not the route's; an invalid value answers 503"
	noteAuthCache     = "a Lua shared dict (--auth-cache-dict-size) keyed by host, path and the expanded key; a code's time as in proxy_cache_valid (no codes: 200, 301, 302); an answer with Set-Cookie or Cache-Control no-store, no-cache or private is not cached, Cache-Control max-age and Expires are not read; the key holds the variables auth-url lists; an invalid value answers 503"
	noteAuthKeepalive = "validated, no effect: each auth request opens its own connection (proxy_pass to a URL held in a variable has no keepalive pool)"
	noteGlobalAuth    = "as the annotation of the same name (the route defaults of Ingresses without auth-url and without enable-global-auth: \"false\"; no reload); an invalid value keeps the previous value, else none"
)

const noteMirrorTarget = "copies sent from Lua in the background, never delaying or failing the request (see docs/dataplane.md); the URL's host and port are fixed, its path and query take the variables auth-url lists, $request_uri or $uri right after the host included; a URL without a path sends the request's URI (ingress-nginx sends its internal mirror location's path); a host name is resolved by nginx's resolver, as an auth-url's"

const noteLimitReq = "a leaky bucket as nginx's limit_req (burst = rate times limit-burst-multiplier, nodelay) in one Lua shared dict (--limits-dict-size), per nginx instance, per Ingress and client address; a request must pass both rates; the dict full answers the limit's status code; an invalid value answers 503"

func supported(name, sample string) RegistryEntry {
	return RegistryEntry{Name: name, Status: StatusSupported, Sample: sample}
}

func differs(name, sample, note string, issue int) RegistryEntry {
	return RegistryEntry{Name: name, Status: StatusSupportedWithDifference, Sample: sample, Note: note, Issue: issue}
}

func refused(name, sample string) RegistryEntry {
	return RegistryEntry{Name: name, Status: StatusRefused, Sample: sample, Note: noteSnippet}
}

func notSupported(name, sample, reason string, issue int) RegistryEntry {
	return RegistryEntry{Name: name, Status: StatusNotSupported, Sample: sample, Note: reason, Issue: issue}
}

// Annotations returns every annotation ingress-nginx v1.15 reads, sorted by
// name, with its status in ingress-sync.
func Annotations() []RegistryEntry { return slices.Clone(registry().annotations) }

// ConfigKeys returns every key of ingress-nginx v1.15's controller
// ConfigMap, sorted, with its status in ingress-sync.
func ConfigKeys() []RegistryEntry { return slices.Clone(registry().keys) }

// LookupAnnotation returns the entry of an annotation, named with or
// without the nginx.ingress.kubernetes.io/ prefix. Any *-snippet name is
// refused, as Build refuses it; another name is not found.
func LookupAnnotation(name string) (RegistryEntry, bool) {
	name = strings.TrimPrefix(name, AnnotationPrefix)
	if e, ok := registry().annotationIndex[name]; ok {
		return e, true
	}
	if strings.HasSuffix(name, "-snippet") {
		return refused(name, ""), true
	}
	return RegistryEntry{Name: name}, false
}

// LookupConfigKey returns the entry of a controller ConfigMap key.
func LookupConfigKey(key string) (RegistryEntry, bool) {
	e, ok := registry().keyIndex[key]
	if !ok {
		e = RegistryEntry{Name: key}
	}
	return e, ok
}

// AnnotationStatus is the status of an annotation (with or without the
// prefix) and its note; StatusUnknown for a name ingress-nginx does not
// read.
func AnnotationStatus(name string) (Status, string) {
	e, ok := LookupAnnotation(name)
	if !ok {
		return StatusUnknown, "not an annotation ingress-nginx v1.15 reads"
	}
	return e.Status, e.Note
}

// ConfigKeyStatus is the status of a controller ConfigMap key and its note;
// StatusUnknown for a key ingress-nginx does not document.
func ConfigKeyStatus(key string) (Status, string) {
	e, ok := LookupConfigKey(key)
	if !ok {
		return StatusUnknown, "not a ConfigMap key of ingress-nginx v1.15"
	}
	return e.Status, e.Note
}

// registryTables is the registry, sorted and indexed once.
type registryTables struct {
	annotations, keys         []RegistryEntry
	annotationIndex, keyIndex map[string]RegistryEntry
}

var registry = sync.OnceValue(func() *registryTables {
	r := &registryTables{annotations: annotationTable(), keys: configKeyTable()}
	r.annotationIndex, r.keyIndex = indexEntries(r.annotations), indexEntries(r.keys)
	return r
})

func indexEntries(entries []RegistryEntry) map[string]RegistryEntry {
	slices.SortFunc(entries, func(a, b RegistryEntry) int { return strings.Compare(a.Name, b.Name) })
	m := make(map[string]RegistryEntry, len(entries))
	for _, e := range entries {
		m[e.Name] = e
	}
	return m
}

// annotationTable lists every annotation ingress-nginx v1.15 reads (its
// annotations.md and internal/ingress/annotations).
func annotationTable() []RegistryEntry {
	const (
		m, a, s  = issueMigration, issueAccessControl, issueStreams
		canary   = "applies only to main Ingresses of its own namespace, on the same host and path (ingress-nginx: any namespace, and every path routed to the main's backend)"
		perRoute = "an nginx directive that takes no variables: it cannot vary per route, as nginx.conf is the same for every Ingress (see docs/dataplane.md); left out with a Problem"
	)
	return []RegistryEntry{
		// Routing, rewrite and redirects.
		differs("rewrite-target", "/$1", noteRegex, m).by(parseCoreAnnotation),
		differs("use-regex", "true", noteRegex, m).by(parseCoreAnnotation),
		supported("app-root", "/app").by(parseRoutingAnnotation),
		supported("x-forwarded-prefix", "/api").by(parseRoutingAnnotation),
		supported("preserve-trailing-slash", "true").by(parseRoutingAnnotation),
		supported("use-port-in-redirects", "true").by(parseRoutingAnnotation),
		notSupported("relative-redirects", "true", "absolute_redirect takes no variables, so it cannot vary per route: the ConfigMap key relative-redirects sets it for every route", m),
		supported("permanent-redirect", "https://www.example.com/").by(parseRoutingAnnotation),
		supported("permanent-redirect-code", "308").by(parseRoutingAnnotation),
		supported("temporal-redirect", "https://www.example.com/").by(parseRoutingAnnotation),
		supported("temporal-redirect-code", "307").by(parseRoutingAnnotation),
		supported("from-to-www-redirect", "true").by(parseRoutingAnnotation),
		supported("ssl-redirect", "true").by(parseCoreAnnotation),
		supported("force-ssl-redirect", "true").by(parseCoreAnnotation),
		differs("ssl-passthrough", "true", "with the syncer's --enable-ssl-passthrough, as ingress-nginx: TLS connections whose SNI is one of the Ingress's hosts go unterminated to the backend of the host's Prefix / path (its ready endpoints, where ingress-nginx dials the Service's cluster IP); exact host names only (a wildcard or empty host gets a Problem); the host's HTTP routes still serve port 80", s).by(parseCoreAnnotation),
		// CORS.
		supported("enable-cors", "true").by(parseRoutingAnnotation),
		supported("cors-allow-origin", "https://a.example.com, https://*.example.com").by(parseRoutingAnnotation),
		supported("cors-allow-methods", "GET, PUT, POST").by(parseRoutingAnnotation),
		supported("cors-allow-headers", "X-Forwarded-For, X-App-Id").by(parseRoutingAnnotation),
		supported("cors-allow-credentials", "true").by(parseRoutingAnnotation),
		supported("cors-expose-headers", "X-Request-Id").by(parseRoutingAnnotation),
		supported("cors-max-age", "600").by(parseRoutingAnnotation),
		// Canary.
		differs("canary", "true", canary, m).by(parseCanaryAnnotation),
		supported("canary-weight", "20").by(parseCanaryAnnotation),
		supported("canary-weight-total", "100").by(parseCanaryAnnotation),
		supported("canary-by-header", "X-Canary").by(parseCanaryAnnotation),
		supported("canary-by-header-value", "always").by(parseCanaryAnnotation),
		differs("canary-by-header-pattern", "^(yes|true)", "a pattern outside RE2 syntax or nginx's PCRE subset is left out with a Problem (ingress-nginx keeps it, and then sends every request with the header to the main backend)", m).by(parseCanaryAnnotation),
		supported("canary-by-cookie", "canary").by(parseCanaryAnnotation),
		// Upstream, headers and proxying.
		differs("backend-protocol", "AUTO_HTTP", "HTTP, HTTPS, GRPC, GRPCS and AUTO_HTTP; FCGI is not supported: FastCGI needs fastcgi_param lines per Ingress, which nginx.conf cannot hold without a reload", m).by(parseCoreAnnotation),
		differs("upstream-vhost", "internal.example.com", "a host name with an optional port: nginx variables are refused", m).by(parseUpstreamAnnotation),
		differs("server-alias", "www.example.com", "exact names and one-label wildcards (*.example.com, as Ingress hosts match) only: nginx regex names are left out with a Problem; an alias serves the paths of its Ingress's namespace only (and its host's certificate when that covers it, as ingress-nginx); an alias that is another rule's host, or another host's alias for an older Ingress, gets a Problem", m).by(parseUpstreamAnnotation),
		differs("service-upstream", "true", "when Ingresses disagree on one Service port, the oldest that sets the annotation decides", m).by(parseUpstreamAnnotation),
		supported("connection-proxy-header", "keep-alive").by(parseUpstreamAnnotation),
		differs("custom-headers", "default/custom-headers", "a missing ConfigMap, or one of another namespace, makes the Ingress's routes answer 503, as ingress-nginx; an entry that is not a valid header or not in global-allowed-response-headers is left out with a Problem, where ingress-nginx answers 503 for the Ingress's paths", m).by(parseUpstreamAnnotation),
		differs("proxy-connect-timeout", "5", noteTimeout, m).by(parseCoreAnnotation),
		differs("proxy-read-timeout", "120", noteTimeout, m).by(parseCoreAnnotation),
		differs("proxy-send-timeout", "120", noteTimeout, m).by(parseCoreAnnotation),
		supported("proxy-body-size", "8m").by(parseCoreAnnotation),
		supported("proxy-buffering", "on").by(parseProxyAnnotation),
		differs("proxy-buffer-size", "4k", "one size for every route, the ConfigMap's proxy-buffer-size (default 4k), as proxy_buffer_size takes no variables: an annotation up to it is served by it, a larger one is left out with a Problem", m).by(parseProxyAnnotation),
		notSupported("proxy-buffers-number", "4", perRoute, m).by(parseProxyAnnotation),
		notSupported("proxy-busy-buffers-size", "16k", perRoute, m).by(parseProxyAnnotation),
		notSupported("proxy-max-temp-file-size", "1024m", perRoute, m).by(parseProxyAnnotation),
		differs("proxy-request-buffering", "off", "with off, a chunked body is checked against proxy-body-size only by the --body-size-ceiling (the router cannot count a body it streams)", m).by(parseProxyAnnotation),
		notSupported("client-body-buffer-size", "1m", perRoute, m).by(parseProxyAnnotation),
		supported("proxy-http-version", "1.0").by(parseProxyAnnotation),
		differs("proxy-next-upstream", "error timeout", "error, timeout (nginx.conf's conditions) and off; any other condition (http_502, non_idempotent, ...) cannot vary per route and is left out with a Problem", m).by(parseProxyAnnotation),
		notSupported("proxy-next-upstream-timeout", "10", perRoute, m).by(parseProxyAnnotation),
		differs("proxy-next-upstream-tries", "3", "bounded by the syncer's --max-tries (default 3, at most 100); 0 means up to that bound", m).by(parseProxyAnnotation),
		differs("proxy-redirect-from", "http://internal.example.com/", "default is taken as off: it names upstream_balancer, a host no backend redirects to", m).by(parseProxyAnnotation),
		supported("proxy-redirect-to", "https://www.example.com/").by(parseProxyAnnotation),
		supported("proxy-cookie-domain", "internal.example.com www.example.com").by(parseProxyAnnotation),
		supported("proxy-cookie-path", "/internal /").by(parseProxyAnnotation),
		notSupported("http2-push-preload", "true", "HTTP/2 server push was removed from nginx (1.25.1)", 0),
		// Errors and default backend.
		differs("custom-http-errors", "404,503", noteErrors, m).by(parseProxyAnnotation),
		supported("default-backend", "error-pages").by(parseProxyAnnotation),
		supported("disable-proxy-intercept-errors", "true").by(parseProxyAnnotation),
		// Load balancing and affinity.
		supported("load-balance", "ewma").by(parseCoreAnnotation),
		supported("upstream-hash-by", "$request_uri").by(parseHashByAnnotation),
		supported("upstream-hash-by-subset", "true").by(parseBalancingAnnotation),
		supported("upstream-hash-by-subset-size", "3").by(parseBalancingAnnotation),
		differs("affinity", "cookie", noteAffinity, m).by(parseBalancingAnnotation),
		supported("affinity-mode", "persistent").by(parseBalancingAnnotation),
		supported("affinity-canary-behavior", "legacy").by(parseCoreAnnotation),
		supported("session-cookie-name", "route").by(parseBalancingAnnotation),
		supported("session-cookie-path", "/app").by(parseBalancingAnnotation),
		supported("session-cookie-max-age", "3600").by(parseBalancingAnnotation),
		supported("session-cookie-expires", "3600").by(parseBalancingAnnotation),
		supported("session-cookie-secure", "true").by(parseBalancingAnnotation),
		supported("session-cookie-samesite", "None").by(parseBalancingAnnotation),
		supported("session-cookie-conditional-samesite-none", "true").by(parseBalancingAnnotation),
		supported("session-cookie-domain", "example.com").by(parseBalancingAnnotation),
		supported("session-cookie-change-on-failure", "true").by(parseBalancingAnnotation),
		// Mirroring and logs.
		differs("mirror-target", "https://test.example.com/mirror", noteMirrorTarget, 0).by(parseMirrorAnnotation),
		supported("mirror-host", "test.example.com").by(parseMirrorAnnotation),
		differs("mirror-request-body", "off", "on or off (ingress-nginx reads any value but off as on); a body over 1 MiB drops that copy (see docs/dataplane.md)", 0).by(parseMirrorAnnotation),
		supported("enable-access-log", "false").by(parseProxyAnnotation),
		notSupported("enable-rewrite-log", "true", "rewrites are done in Lua, which nginx's rewrite log does not see", 0).by(parseProxyAnnotation),
		// Access control.
		differs("whitelist-source-range", "10.0.0.0/8,192.168.0.1", noteSourceRange, a).by(parseSourceRangeAnnotation),
		differs("allowlist-source-range", "10.0.0.0/8,192.168.0.1", noteSourceRange, a).by(parseSourceRangeAnnotation),
		differs("denylist-source-range", "10.1.0.0/16", noteSourceRange, a).by(parseSourceRangeAnnotation),
		differs("satisfy", "any", noteSatisfy, a).by(parseAuthAnnotation),
		supported("enable-global-auth", "false").by(parseExtAuthAnnotation),
		differs("auth-type", "basic", noteAuthType, a).by(parseAuthAnnotation),
		differs("auth-secret", "default/basic-auth", noteAuthSecret, a).by(parseAuthAnnotation),
		supported("auth-secret-type", "auth-file").by(parseAuthAnnotation),
		supported("auth-realm", "Authentication Required").by(parseAuthAnnotation),
		differs("auth-url", "http://auth.default.svc.cluster.local/verify", noteAuthURL, a).by(parseExtAuthAnnotation),
		differs("auth-method", "GET", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, TRACE; CONNECT answers 503 (a Lua subrequest cannot send it)", a).by(parseExtAuthAnnotation),
		differs("auth-signin", "https://auth.example.com/start", "an http(s) URL or an absolute path, with the variables auth-url lists anywhere; the redirect parameter is added as ingress-nginx does; an invalid value answers 503 (ingress-nginx ignores it and answers 401)", a).by(parseExtAuthAnnotation),
		supported("auth-signin-redirect-param", "rd").by(parseExtAuthAnnotation),
		supported("auth-response-headers", "X-User, X-Email").by(parseExtAuthAnnotation),
		differs("auth-proxy-set-headers", "default/auth-headers", "values are sent as written: a value with $ (an nginx variable for ingress-nginx) makes the routes answer 503, as a missing ConfigMap or an invalid header name does", a).by(parseExtAuthAnnotation),
		supported("auth-request-redirect", "/login").by(parseExtAuthAnnotation),
		differs("auth-cache-key", "session", noteAuthCache, a).by(parseExtAuthAnnotation),
		differs("auth-cache-duration", "200 202 401 5m", noteAuthCache, a).by(parseExtAuthAnnotation),
		supported("auth-always-set-cookie", "true").by(parseExtAuthAnnotation),
		differs("auth-keepalive", "10", noteAuthKeepalive, a).by(parseExtAuthAnnotation),
		differs("auth-keepalive-requests", "100", noteAuthKeepalive, a).by(parseExtAuthAnnotation),
		differs("auth-keepalive-share-vars", "true", "validated, no effect: the auth request never shares the request's variables", a).by(parseExtAuthAnnotation),
		differs("auth-keepalive-timeout", "60", noteAuthKeepalive, a).by(parseExtAuthAnnotation),
		differs("auth-tls-secret", "default/ca", noteAuthTLSSecret, a).by(parseClientAuthAnnotation),
		differs("auth-tls-verify-client", "on", noteAuthTLSValue, a).by(parseClientAuthAnnotation),
		differs("auth-tls-verify-depth", "1", noteAuthTLSValue, a).by(parseClientAuthAnnotation),
		differs("auth-tls-error-page", "https://www.example.com/error-cert.html", noteAuthTLSErrorPage, a).by(parseClientAuthAnnotation),
		differs("auth-tls-pass-certificate-to-upstream", "true", noteAuthTLSPassCert, a).by(parseClientAuthAnnotation),
		differs("auth-tls-match-cn", "CN=client", noteAuthTLSMatchCN, a).by(parseClientAuthAnnotation),
		differs("proxy-ssl-secret", "default/backend-ca", "ca.crt verifies the backend, tls.crt/tls.key are presented to it (a Secret with either is enough, and \"name\" means the Ingress's namespace); HTTPS and GRPCS backends (ingress-nginx: HTTPS only). Each distinct profile (CA, client certificate, verify, depth, protocols, ciphers, server name, and the name when verified or sent) is a set of fixed nginx locations: the first route of a new profile reloads nginx once, at most --max-upstream-tls-profiles (16) profiles, beyond them and for a missing or invalid Secret the Ingress's routes answer 503", a).by(parseProxySSLAnnotation),
		differs("proxy-ssl-verify", "on", "on without a Secret or without ca.crt, or a value other than on/off, answers 503 (ingress-nginx: off, unverified)", a).by(parseProxySSLAnnotation),
		differs("proxy-ssl-verify-depth", "1", "1 to 100 (0 is 1); another value answers 503 (ingress-nginx: 1)", a).by(parseProxySSLAnnotation),
		differs("proxy-ssl-ciphers", "HIGH:!aNULL:!MD5", "only OpenSSL 3.0's TLS 1.2 cipher names and keywords (a fixed table), with at least one element adding ciphers; another value answers 503 (ingress-nginx: DEFAULT); applied without ca.crt too", a).by(parseProxySSLAnnotation),
		differs("proxy-ssl-protocols", "TLSv1.2 TLSv1.3", "TLSv1.2 and/or TLSv1.3; another value answers 503 (ingress-nginx: TLSv1.2)", a).by(parseProxySSLAnnotation),
		differs("proxy-ssl-name", "backend.example.com", "a DNS name, through a variable; with proxy-ssl-verify or proxy-ssl-server-name on, each name is part of the backend TLS profile (a new name reloads nginx once), so that a kept-alive connection opened and verified for one name is never reused for another (ingress-nginx shares one pool: a connection may be reused under another name or SNI)", a).by(parseProxySSLAnnotation),
		supported("proxy-ssl-server-name", "on").by(parseProxySSLAnnotation),
		differs("limit-rps", "10", noteLimitReq, a).by(parseLimitAnnotation),
		differs("limit-rpm", "300", noteLimitReq, a).by(parseLimitAnnotation),
		differs("limit-connections", "10", "requests in progress per Ingress and client address in each nginx instance (nginx's limit_conn counts the same), in a Lua shared dict; an invalid value answers 503", a).by(parseLimitAnnotation),
		supported("limit-burst-multiplier", "5").by(parseLimitAnnotation),
		differs("limit-rate", "100", "kilobytes per second, set per request through $limit_rate, with proxy-buffering on (as ingress-nginx); an invalid value answers 503 (ingress-nginx falls back to the ConfigMap's)", a).by(parseLimitAnnotation),
		differs("limit-rate-after", "1024", "kilobytes, applied with limit-rate only (as nginx); an invalid value answers 503", a).by(parseLimitAnnotation),
		supported("limit-allowlist", "10.0.0.0/8").by(parseLimitAnnotation),
		supported("limit-whitelist", "10.0.0.0/8").by(parseLimitAnnotation),
		// Per-host TLS, modules.
		notSupported("ssl-ciphers", "HIGH:!aNULL:!MD5", noteOneContext, 0),
		notSupported("ssl-prefer-server-ciphers", "true", noteOneContext, 0),
		differs("enable-modsecurity", "true", noteModSecEngine, 0).by(parseModSecurityAnnotation),
		supported("enable-owasp-core-rules", "true").by(parseModSecurityAnnotation),
		differs("modsecurity-transaction-id", "$request_id", "one nginx variable ($request_id); without it the transaction id is the request's $request_id; another value answers 503 where ModSecurity is on", 0).by(parseModSecurityAnnotation),
		differs("enable-opentelemetry", "true", noteOtel, 0).by(parseTracingAnnotation),
		supported("opentelemetry-operation-name", "my_backend").by(parseTracingAnnotation),
		supported("opentelemetry-trust-incoming-span", "false").by(parseTracingAnnotation),
		notSupported("fastcgi-index", "index.php", noteFCGI, 0),
		notSupported("fastcgi-params-configmap", "default/fastcgi-params", noteFCGI, 0),
		// Snippets.
		refused("configuration-snippet", "more_set_headers \"X-Frame-Options: DENY\";"),
		refused("server-snippet", "location /internal { deny all; }"),
		refused("auth-snippet", "proxy_set_header X-Auth on;"),
		refused("stream-snippet", "server { listen 8000; }"),
		differs("modsecurity-snippet", "SecRuleEngine On", noteModSecSnippet, 0).by(parseModSecurityAnnotation),
	}
}

// configKeyTable lists every key of ingress-nginx v1.15's configmap.md.
func configKeyTable() []RegistryEntry {
	const (
		m, a, s       = issueMigration, issueAccessControl, issueStreams
		streamRetry   = "a TCP or UDP connection goes to one ready endpoint picked at random (the endpoints change without a reload, so nginx.conf has no upstream block to retry in); a failed connect is not retried on another endpoint"
		hashNote      = "not set: nginx's default, enough for nginx.conf's own names (the routes live in Lua, not in nginx's hash tables); a value below the directive's least (32 for buckets, 64 for the proxy headers' and variables' buckets, 512 for the max sizes) is refused with a Problem"
		noEffect      = "no effect, as in ingress-nginx v1.15, which no longer reads it (its documentation still lists it)"
		http2Obsolete = "validated, no effect: nginx made the directive obsolete in 1.19.7 (ingress-nginx writes it and nginx ignores it with a warning); the key that takes its place is "
		tracing       = "tracing (Jaeger, OpenTelemetry) is not part of the data plane"
		brotliNote    = "Debian's brotli filter module, loaded only while on; brotli responses carry Vary: Accept-Encoding without use-gzip too; no brotli_static"
		geoip2Note    = "Debian's geoip2 module; the MaxMind databases are mounted in /etc/ingress-controller/geoip under ingress-nginx's file names (no download: --maxmind-license-key has no equivalent) and looked up when nginx.conf is rendered; a $geoip2_* variable no database defines is empty"
		risk          = "validated, no effect: snippets (the Critical annotations) are always refused, and every other annotation is accepted whatever the level, as each value goes through the typed validator of its annotation and none is written into nginx.conf"
		// keyTimeout: the ConfigMap's proxy timeouts (annotations: noteTimeout).
		keyTimeout = "whole seconds from 1 to 86400; ingress-nginx takes any integer"
	)
	return []RegistryEntry{
		// What is applied today.
		supported("ssl-redirect", "true"),
		differs("use-forwarded-headers", "true", "X-Forwarded-Proto, -Host and -Port are passed on; "+noteTrust, m),
		differs("allow-snippet-annotations", "false", "accepted, but snippets are never applied: an Ingress carrying one is not served", 0),
		differs("proxy-connect-timeout", "5", keyTimeout, m),
		differs("proxy-read-timeout", "60", keyTimeout, m),
		differs("proxy-send-timeout", "60", keyTimeout, m),
		supported("proxy-body-size", "8m"),
		supported("upstream-keepalive-connections", "320"),
		// The migration issue: nginx.conf directives and per-route defaults.
		supported("force-ssl-redirect", "true"),
		supported("hsts", "true"),
		supported("hsts-max-age", "31536000"),
		supported("hsts-include-subdomains", "true"),
		supported("hsts-preload", "false"),
		supported("use-gzip", "true"),
		supported("gzip-level", "5"),
		supported("gzip-min-length", "256"),
		supported("gzip-types", "application/json text/css"),
		differs("gzip-disable", "msie6", "msie6 or one regular expression of letters, digits, spaces and .*+?()[]|^/_-: (a literal dot is [.]; no quote, backslash or variable: nginx.conf holds it); another is refused with a Problem", m),
		differs("ssl-protocols", "TLSv1.2 TLSv1.3", "SSLv2 and SSLv3 are refused: OpenSSL 3 has neither", m),
		supported("ssl-ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256"),
		supported("ssl-session-cache", "true"),
		supported("ssl-session-cache-size", "10m"),
		supported("ssl-session-tickets", "false"),
		notSupported("ssl-session-ticket-key", "c2VjcmV0", "key material is never taken from a ConfigMap (readable by anyone who may read ConfigMaps, and carried by the stream): with ssl-session-tickets each nginx makes its own keys, so a ticket resumes only on the replica that issued it", m),
		supported("ssl-session-timeout", "10m"),
		supported("keep-alive", "75"),
		supported("keep-alive-requests", "1000"),
		supported("upstream-keepalive-timeout", "60"),
		supported("upstream-keepalive-requests", "10000"),
		supported("upstream-keepalive-time", "30m"),
		supported("client-header-timeout", "60"),
		supported("client-body-timeout", "60"),
		supported("client-header-buffer-size", "1k"),
		supported("large-client-header-buffers", "4 8k"),
		differs("client-body-buffer-size", "8k", noteHTTPLevel, m),
		supported("proxy-buffering", "off"),
		differs("proxy-buffer-size", "4k", "also the size of the proxy-buffers-number buffers (proxy_buffers), as one setting of nginx.conf (a change reloads)", m),
		differs("proxy-buffers-number", "8", noteHTTPLevel, m),
		differs("proxy-busy-buffers-size", "8k", noteHTTPLevel+"; a size below proxy-buffer-size or above all buffers but one is refused with a Problem (nginx would refuse the configuration)", m),
		supported("proxy-request-buffering", "on"),
		supported("proxy-next-upstream", "error timeout"),
		differs("proxy-next-upstream-timeout", "10", noteHTTPLevel+"; for gRPC backends too", m),
		supported("proxy-next-upstream-tries", "3"),
		supported("proxy-redirect-from", "off"),
		supported("proxy-cookie-domain", "off"),
		supported("proxy-cookie-path", "off"),
		supported("proxy-redirect-to", "off"),
		supported("proxy-http-version", "1.1"),
		supported("use-http2", "true"),
		supported("http2-max-concurrent-streams", "128"),
		differs("log-format-upstream", "$remote_addr - $request $status", "nginx variables from an allow-list only: ingress-nginx's own ($namespace, $ingress_name, $service_name, $service_port, $location_path, $proxy_alternative_upstream_name) are refused, and so are ' \\ ` and a literal $", m),
		supported("log-format-escape-json", "true"),
		supported("log-format-escape-none", "true"),
		supported("error-log-level", "notice"),
		differs("server-tokens", "false", "false sends Server: nginx without the version; ingress-nginx removes the header", m),
		supported("worker-processes", "2"),
		differs("max-worker-connections", "16384", "0 keeps the syncer's --worker-connections (ingress-nginx derives it from max-worker-open-files)", m),
		differs("worker-shutdown-timeout", "240s", "sets nginx's worker_shutdown_timeout; the graceful stop of the process that runs nginx (syncer nginx, or the syncer with --nginx-mode=child) still waits its --worker-shutdown-timeout", m),
		differs("custom-http-errors", "404,503", "the default of the annotation; nginx.conf holds error_page for exactly these codes, so a change reloads; 499 is refused (nginx never answers it)", m),
		differs("proxy-set-headers", "ingress/custom-headers", "values are sent as written: a value with $ (an nginx variable for ingress-nginx) is left out with a Problem, and so are the headers nginx.conf sets (Host, Connection, Upgrade, X-Real-IP, X-Forwarded-*, X-Original-Forwarded-For, X-Request-ID, X-Scheme, Proxy)", m),
		differs("add-headers", "ingress/response-headers", "values are sent as written: a value with $ (an nginx variable for ingress-nginx) is left out with a Problem", m),
		supported("load-balance", "ewma"),
		supported("service-upstream", "false"),
		supported("http-redirect-code", "301"),
		supported("no-tls-redirect-locations", "/.well-known/acme-challenge"),
		supported("relative-redirects", "true"),
		// The access-control issue.
		differs("whitelist-source-range", "10.0.0.0/8", "the allow-list of routes whose Ingress sets none, pushed to the routes (no reload); "+noteSourceRange, a),
		differs("denylist-source-range", "10.1.0.0/16", "the deny-list of routes whose Ingress sets none, pushed to the routes (no reload); "+noteSourceRange, a),
		differs("block-cidrs", "192.0.2.0/24", "checked in Lua before any route (403), pushed to the routes (no reload); the client address is $remote_addr, as for the source ranges", a),
		differs("block-user-agents", "~*badbot", noteBlock, a),
		differs("block-referers", "~*spam", noteBlock, a),
		differs("enable-real-ip", "true", noteTrust, a),
		differs("proxy-real-ip-cidr", "10.0.0.0/8", "empty by default: no proxy is trusted (ingress-nginx: 0.0.0.0/0); with use-proxy-protocol, empty trusts the PROXY header from any peer", a),
		differs("forwarded-for-header", "X-Forwarded-For", noteTrust, a),
		supported("compute-full-forwarded-for", "true"),
		differs("use-proxy-protocol", "true", "on every public listener (a change reloads); with use-forwarded-headers too, the PROXY header's address is the client's and the forwarded header is not read (ingress-nginx reads it from trusted PROXY addresses)", a),
		notSupported("forwarded-for-proxy-protocol-header", "X-Forwarded-For-Proxy-Protocol", "with use-proxy-protocol the PROXY header's address is the client's; a forwarded header behind it is not read", a),
		differs("proxy-protocol-header-timeout", "5s", "the stream listeners that decode a PROXY header (a TCP service's first PROXY, the SSL passthrough listener with use-proxy-protocol) wait this long for it; the HTTP listeners read theirs within client-header-timeout, as nginx does", s),
		supported("proxy-add-original-uri-header", "true"),
		differs("global-auth-url", "http://auth.ingress.svc.cluster.local/verify", noteGlobalAuth, a),
		differs("global-auth-method", "GET", noteGlobalAuth, a),
		differs("global-auth-signin", "https://auth.example.com/start", noteGlobalAuth, a),
		supported("global-auth-signin-redirect-param", "rd"),
		differs("global-auth-response-headers", "X-User", noteGlobalAuth, a),
		supported("global-auth-request-redirect", "/login"),
		differs("global-auth-cache-key", "session", noteAuthCache, a),
		differs("global-auth-cache-duration", "200 202 401 5m", noteAuthCache, a),
		supported("global-auth-always-set-cookie", "true"),
		supported("no-auth-locations", "/.well-known/acme-challenge"),
		differs("limit-rate", "100", "kilobytes per second (ingress-nginx's docs say bytes; its template writes kilobytes, as here): the default of the routes whose Ingress has no limit-rate annotation, a route setting (no reload)", a),
		differs("limit-rate-after", "1024", "kilobytes, the default of the routes whose Ingress has no limit-rate-after annotation; it acts only where a limit-rate applies (as nginx)", a),
		supported("limit-conn-status-code", "429"),
		supported("limit-req-status-code", "429"),
		notSupported("limit-conn-zone-variable", "binary_remote_addr", "the rate and connection limits count per client address ($remote_addr, after the real-IP settings) and Ingress, in a Lua shared dict; another key is not offered", a),
		differs("proxy-ssl-location-only", "false", "false (the default): a host's routes whose Ingress sets no proxy-ssl-secret take the backend TLS of the host's oldest Ingress of their namespace whose Secret has a ca.crt, as ingress-nginx's server-level proxy_ssl_* directives, but never across namespaces nor for the default backend (ingress-nginx: every location of the host, so one namespace's client certificate may serve another's routes); routes only, no reload", a),
		differs("global-allowed-response-headers", "X-User", "names are compared without case; a name that is not a header name refuses the whole value (ingress-nginx skips that name)", m),
		// The streams issue.
		supported("proxy-stream-timeout", "600s"),
		supported("proxy-stream-responses", "1"),
		notSupported("proxy-stream-next-upstream", "true", streamRetry, s),
		notSupported("proxy-stream-next-upstream-timeout", "600s", streamRetry, s),
		notSupported("proxy-stream-next-upstream-tries", "3", streamRetry, s),
		differs("stream-access-log-path", "/var/log/nginx/stream.log", "as access-log-path: the default (and ingress-nginx's /var/log/nginx/access.log) is nginx's stdout, which the syncer passes on", s),
		differs("log-format-stream", "[$remote_addr] $protocol $status", "the variables of nginx's stream core, proxy, upstream and ssl_preread modules only; quotes, backslashes and control characters are refused", s),
		// Snippets.
		refused("main-snippet", "worker_rlimit_nofile 65535;"),
		refused("http-snippet", "map $http_x $y { default 1; }"),
		refused("server-snippet", "location /internal { deny all; }"),
		refused("location-snippet", "more_set_headers \"X: y\";"),
		refused("stream-snippet", "server { listen 8000; }"),
		refused("modsecurity-snippet", "SecRuleEngine On"),
		refused("global-auth-snippet", "proxy_set_header X-Auth on;"),
		// Not planned: the reason is in the note.
		differs("annotations-risk-level", "Critical", risk, 0),
		differs("annotation-value-word-blocklist", "load_module,lua_package", "validated (words separated by commas), not enforced: no annotation value is ever written into nginx.conf, each goes through the typed validator of its annotation, and snippets are always refused", 0),
		differs("strict-validate-path-type", "true", "validated, always on: paths are always validated by their type (see docs/dataplane.md), false does not relax it", 0),
		supported("allow-backend-server-header", "true"),
		differs("hide-headers", "X-Powered-By", "header names of letters, digits, - and _ only (nginx.conf holds them); another makes the key refused with a Problem", m),
		differs("allow-cross-namespace-resources", "false", "validated, always false: the Secrets and ConfigMaps an annotation names stay in the Ingress's namespace (true does not open other namespaces)", 0),
		differs("access-log-path", "/var/log/nginx/access.log", noteAccessLogPath, 0),
		supported("access-log-params", "buffer=16k flush=5m"),
		differs("http-access-log-path", "/var/log/nginx/http.log", "over access-log-path for HTTP requests, with its values: "+noteAccessLogPath, 0),
		differs("error-log-path", "/var/log/nginx/error.log", "the error log always goes to nginx's stderr, which the syncer reads and logs (ingress-nginx's default /var/log/nginx/error.log, a symlink to stderr in its image, means that); another file, an absolute path of plain names outside /dev, /proc and /sys, or /dev/stdout, gets the same lines too", 0),
		supported("disable-access-log", "true"),
		notSupported("enable-access-log-for-default-backend", "true", noteLog, 0),
		differs("skip-access-log-urls", "/healthz,/ping", "request URIs of letters, digits and /._~%!&()*+=:@?- only (nginx.conf holds them); another makes the key refused with a Problem", 0),
		differs("enable-syslog", "true", "with syslog-host only (without it the logs stay where they were, with a note in nginx.conf); the error log also stays on stderr", 0),
		supported("syslog-host", "syslog.example.com"),
		supported("syslog-port", "514"),
		supported("debug-connections", "10.0.0.1, 192.168.0.0/24"),
		supported("generate-request-id", "false"),
		differs("bind-address", "10.0.0.1", noEffect+"; the syncer's --listen-address flag sets the listening address", 0),
		notSupported("disable-ipv6", "true", "the syncer's --listen-address flag sets the listening address", 0),
		notSupported("disable-ipv6-dns", "true", "backends are endpoint addresses; the one name lookup, of auth-url hosts (--resolver), asks for IPv4 addresses only", 0),
		differs("reuse-port", "true", "not set: off (ingress-nginx: true); on the public HTTP and HTTPS listeners", 0),
		differs("enable-multi-accept", "true", "not set: nginx's off (ingress-nginx: true)", 0),
		differs("enable-aio-write", "true", "not set: off (ingress-nginx: true); true sets aio threads with aio_write on", 0),
		differs("enable-serial-reloads", "true", "validated, no effect: Ingress changes never reload nginx, and the syncer applies one reload at a time", 0),
		supported("enable-underscores-in-headers", "true"),
		supported("ignore-invalid-headers", "false"),
		supported("retry-non-idempotent", "true"),
		differs("max-worker-open-files", "65536", "0 (the default) leaves nginx's limit, the process's (ingress-nginx derives one from the system's)", 0),
		supported("worker-cpu-affinity", "auto"),
		differs("default-type", "text/html", "a MIME type without parameters; not set: text/plain (ingress-nginx: text/html)", 0),
		notSupported("lua-shared-dicts", "configuration_data: 20", "the syncer sizes its shared dicts (--routes-dict-size)", 0),
		notSupported("nginx-status-ipv4-whitelist", "127.0.0.1", "the status port listens on 127.0.0.1 only", 0),
		notSupported("nginx-status-ipv6-whitelist", "::1", "the status port listens on 127.0.0.1 only", 0),
		differs("ssl-buffer-size", "4k", "1k to 16k; not set: nginx's 16k (ingress-nginx: 4k)", 0),
		notSupported("ssl-dh-param", "ingress/dhparam", "no DH parameters are read: the DHE ciphers of ssl-ciphers are not offered (nginx offers them only with parameters), the ECDHE ones are; use ECDHE ciphers, as the default list starts with", 0),
		differs("ssl-ecdh-curve", "X25519:prime256v1", "auto or names joined by ':' among X25519, X448, prime256v1, secp384r1, secp521r1, P-256, P-384, P-521 and ffdhe2048 to ffdhe8192 (what OpenSSL 3 knows in every build); another is refused with a Problem", 0),
		notSupported("ssl-reject-handshake", "false", "a TLS handshake for a name no certificate covers gets the default certificate, as ingress-nginx's default (false); refusing the handshake is not offered", 0),
		notSupported("enable-ocsp", "false", "no OCSP response is stapled, as ingress-nginx's default (false): certificates are chosen in Lua during the handshake, where nginx's ssl_stapling does not apply", 0),
		differs("http2-max-field-size", "4k", http2Obsolete+"large-client-header-buffers", 0),
		differs("http2-max-header-size", "16k", http2Obsolete+"large-client-header-buffers", 0),
		differs("http2-max-requests", "1000", http2Obsolete+"keep-alive-requests", 0),
		supported("grpc-buffer-size-kb", "8"),
		differs("server-name-hash-bucket-size", "64", hashNote, 0),
		differs("server-name-hash-max-size", "1024", hashNote, 0),
		differs("map-hash-bucket-size", "64", hashNote, 0),
		differs("proxy-headers-hash-bucket-size", "64", hashNote, 0),
		differs("proxy-headers-hash-max-size", "512", hashNote, 0),
		differs("variables-hash-bucket-size", "128", hashNote, 0),
		differs("variables-hash-max-size", "4096", hashNote+"; at least 2048, which nginx.conf's own variables need", 0),
		differs("enable-brotli", "true", brotliNote, 0),
		supported("brotli-level", "4"),
		supported("brotli-min-length", "20"),
		supported("brotli-types", "application/json"),
		differs("use-geoip", "true", noEffect+"; use use-geoip2", 0),
		differs("use-geoip2", "true", geoip2Note, 0),
		supported("geoip2-autoreload-in-minutes", "0"),
		differs("enable-modsecurity", "true", noteModSecEngine, 0),
		supported("enable-owasp-modsecurity-crs", "true"),
		differs("enable-opentelemetry", "true", noteOtel, 0),
		notSupported("opentelemetry-config", "/etc/nginx/opentelemetry.toml", "the syncer exports the spans itself, configured by the otel-* and otlp-* keys: there is no module configuration file", 0),
		differs("opentelemetry-operation-name", "HTTP $request_method $uri", "literal text (letters, digits, spaces, -_./:) with $host, $request_method, $request_uri, $scheme and $uri; another variable is refused with a Problem (ingress-nginx takes any nginx variable)", 0),
		supported("opentelemetry-trust-incoming-span", "false"),
		differs("otlp-collector-host", "otel.example.com", "a DNS name or IP address (ingress-nginx: a URL); the syncer exports, a change reconnects it without a reload", 0),
		supported("otlp-collector-port", "4317"),
		supported("otel-service-name", "nginx-proxy"),
		differs("otel-sampler", "AlwaysOn", "AlwaysOn, AlwaysOff or TraceIdRatioBased (remote is refused with a Problem); TraceIdRatioBased compares the trace id's last 8 hex digits with the ratio", 0),
		supported("otel-sampler-ratio", "0.5"),
		supported("otel-sampler-parent-based", "false"),
		differs("otel-max-queuesize", "2048", "the syncer's export queue; nginx holds at most 8192 spans not yet read by the syncer: beyond, spans are dropped and counted (ingress_sync_tracing_spans_dropped_total)", 0),
		supported("otel-schedule-delay-millis", "5000"),
		supported("otel-max-export-batch-size", "512"),
		differs("jaeger-collector-host", "jaeger.example.com", noEffect+"; OpenTelemetry takes the place of Jaeger", 0),
		differs("jaeger-collector-port", "6831", noEffect+"; OpenTelemetry takes the place of Jaeger", 0),
		differs("jaeger-endpoint", "http://jaeger:14268/api/traces", noEffect+"; OpenTelemetry takes the place of Jaeger", 0),
		differs("jaeger-service-name", "nginx", noEffect+"; OpenTelemetry takes the place of Jaeger", 0),
		differs("jaeger-propagation-format", "jaeger", noEffect+"; OpenTelemetry takes the place of Jaeger", 0),
		differs("jaeger-sampler-type", "const", noEffect+"; OpenTelemetry takes the place of Jaeger", 0),
		differs("jaeger-sampler-param", "1", noEffect+"; OpenTelemetry takes the place of Jaeger", 0),
		differs("jaeger-sampler-host", "http://127.0.0.1", noEffect+"; OpenTelemetry takes the place of Jaeger", 0),
		differs("jaeger-sampler-port", "5778", noEffect+"; OpenTelemetry takes the place of Jaeger", 0),
		differs("jaeger-trace-context-header-name", "uber-trace-id", noEffect+"; OpenTelemetry takes the place of Jaeger", 0),
		differs("jaeger-debug-header", "uber-debug-id", noEffect+"; OpenTelemetry takes the place of Jaeger", 0),
		differs("jaeger-baggage-header", "jaeger-baggage", noEffect+"; OpenTelemetry takes the place of Jaeger", 0),
		differs("jaeger-trace-baggage-header-prefix", "uberctx-", noEffect+"; OpenTelemetry takes the place of Jaeger", 0),
	}
}
