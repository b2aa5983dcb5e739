package ingress

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Backend TLS (proxy-ssl-secret, proxy-ssl-verify, proxy-ssl-verify-depth,
// proxy-ssl-name, proxy-ssl-server-name, proxy-ssl-protocols,
// proxy-ssl-ciphers; the ConfigMap's proxy-ssl-location-only), as
// ingress-nginx's proxyssl annotation parser and nginx's proxy_ssl_*:
//
//   - proxy-ssl-secret "namespace/name" (or "name"), in the Ingress's
//     namespace: ca.crt verifies the backend's certificate, tls.crt and
//     tls.key (both or neither) are the client certificate presented to it.
//   - proxy-ssl-verify on or off (default off); proxy-ssl-verify-depth 1 to
//     100 (default 1; 0 is 1, as ingress-nginx); proxy-ssl-server-name on or
//     off (default off): SNI.
//   - proxy-ssl-name a DNS name: the name verified and sent as SNI
//     (default "upstream_balancer", nginx's $proxy_host in ingress-nginx).
//   - proxy-ssl-protocols TLSv1.2 and/or TLSv1.3 (default TLSv1.2), the
//     versions ingress-nginx v1.15 accepts.
//   - proxy-ssl-ciphers an OpenSSL cipher list made only of the names and
//     keywords of opensslCiphers, separated by ':' and prefixed by '!', '-'
//     or '+', joined by '+' (default DEFAULT).
//
// nginx's proxy_ssl_trusted_certificate, _verify, _verify_depth,
// _protocols, _ciphers and _server_name take no variables: each distinct
// set of them, with the CA and client certificate (files the syncer
// writes, named by content), is a profile (Configuration.UpstreamTLS) with
// fixed locations in nginx.conf; a new profile reloads nginx, a route
// moving between existing profiles does not. proxy_ssl_name takes a
// variable and is the route's (ProxySSL.Name); with proxy-ssl-verify or
// proxy-ssl-server-name on, the name is part of the profile too
// (UpstreamTLS.PeerName), so that each name has its own kept-alive
// connections.
//
// Fail closed: an invalid value, proxy-ssl-verify on without a Secret, a
// missing Secret, one without ca.crt when verify is on, an unparsable
// certificate or key, or more profiles than Options.MaxUpstreamTLSProfiles
// give the Ingress's locations a ProxySSL with Unavailable set (503) and a
// Problem; never a connection without the verification asked for.
//
// Without proxy-ssl-location-only (ingress-nginx's default), the locations
// of a host whose Ingress sets no proxy-ssl-secret take the profile of the
// oldest Ingress of that host and namespace with one whose Secret has a
// ca.crt, as ingress-nginx's server-level proxy_ssl_* directives (which
// also apply across namespaces and to the host's default backend).

// applyProxySSL parses one proxy-ssl-* annotation; ok is false for others.
func applyProxySSL(a *intent.Settings, name, v string) bool {
	in := &a.ProxySSL
	var err error
	switch name {
	case "proxy-ssl-secret":
		in.Requested = true
		if !validSecretRef(v) {
			err = errors.New(`must be "namespace/name" or "name"`)
		} else {
			in.Secret = v
		}
	case "proxy-ssl-verify":
		in.Verify, err = parseOnOff(v)
		in.Requested = in.Requested || in.Verify
	case "proxy-ssl-server-name":
		in.ServerName, err = parseOnOff(v)
	case "proxy-ssl-verify-depth":
		in.Depth, err = ParseProxySSLVerifyDepth(v)
	case "proxy-ssl-name":
		in.Name, err = config.ParseProxySSLName(v)
	case "proxy-ssl-protocols":
		in.Protocols, err = config.ParseProxySSLProtocols(v)
	case "proxy-ssl-ciphers":
		in.Ciphers, err = config.ParseProxySSLCiphers(v)
	default:
		return false
	}
	if name != "proxy-ssl-secret" {
		in.Others = append(in.Others, name)
	}
	if err != nil {
		in.Requested = true
		if in.Err == "" {
			in.Err = fmt.Sprintf("annotation %s%s=%s: %v", AnnotationPrefix, name, intent.Quote(v), err)
		}
	}
	return true
}

// finishProxySSL checks what the proxy-ssl-* annotations ask as a whole.
func finishProxySSL(a *intent.Settings) {
	in := &a.ProxySSL
	switch {
	case in.Err != "":
	case in.Verify && in.Secret == "":
		in.Err = "annotation " + AnnotationPrefix + "proxy-ssl-verify=on without proxy-ssl-secret (no CA to verify with)"
	case in.Secret == "" && len(in.Others) > 0:
		a.Problems = append(a.Problems, fmt.Sprintf("annotations %s%s need %sproxy-ssl-secret; ignored", AnnotationPrefix,
			strings.Join(in.Others, ", "+AnnotationPrefix), AnnotationPrefix))
	}
}

// ParseProxySSLVerifyDepth parses proxy-ssl-verify-depth: 0 to 100, 0
// meaning the default 1.
func ParseProxySSLVerifyDepth(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > intent.MaxProxySSLVerifyDepth || !intent.AllDigits(v) {
		return 0, fmt.Errorf("must be a number from 1 to %d", intent.MaxProxySSLVerifyDepth)
	}
	return max(n, 1), nil
}
