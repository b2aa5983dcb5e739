package ingress

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// AnnotationPrefix is the prefix of the ingress-nginx annotations we read.
const AnnotationPrefix = "nginx.ingress.kubernetes.io/"

// parseAnnotations validates every nginx.ingress.kubernetes.io/* annotation
// in sorted order. Rejected values are left out with a reason (a Problem on
// the Ingress); the Ingress itself is still served. Every value is first
// checked for control characters (newlines included), ';', '{', '}',
// quotes, backslash and '$' (allowed only where the annotation says), then
// parsed by its own typed parser:
//
//   - proxy-connect-timeout, proxy-read-timeout, proxy-send-timeout: whole
//     seconds, 1 to 86400 ("60", not "60s"), as the ConfigMap's.
//   - proxy-buffering, proxy-request-buffering, proxy-http-version,
//     proxy-next-upstream(-tries), proxy-redirect-*, proxy-cookie-*,
//     enable-access-log: see applyProxy (ProxySettings); buffer sizes are
//     validated and left out with a Problem (they cannot vary per route).
//   - proxy-body-size: an nginx size, digits with an optional k, m or g.
//   - ssl-redirect, force-ssl-redirect, use-regex: true or false.
//   - backend-protocol: HTTP, HTTPS, GRPC, GRPCS or AUTO_HTTP, in any case.
//   - rewrite-target: an absolute path of allowed path characters, where
//     '$' may only start a capture reference $0 to $9.
//   - whitelist-source-range, allowlist-source-range,
//     denylist-source-range: see annotations_acl.go (fail closed).
//   - load-balance (round_robin, ewma), upstream-hash-by(-subset, -size),
//     affinity and session-cookie-*: backend-level, see
//     annotations_affinity.go and Build.
//   - canary and canary-*: see applyCanary; a canary Ingress adds no
//     routes of its own (see buildCanaries).
//   - mirror-target, mirror-host, mirror-request-body: see
//     annotations_mirror.go.
//   - *-snippet: never parsed nor emitted; Build leaves an Ingress that
//     carries one out entirely (fail closed, see snippet.go).
//   - any other annotation under the prefix: reported as not supported.
func parseAnnotations(annotations map[string]string) intent.Settings {
	var a intent.Settings
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		if strings.HasPrefix(k, AnnotationPrefix) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return a
	}
	sort.Strings(keys)
	var st parseState
	for _, k := range keys {
		name := strings.TrimPrefix(k, AnnotationPrefix)
		parse, refused := annotationParserOf(name)
		if refused {
			a.Snippets = append(a.Snippets, k)
			continue
		}
		err := errUnsupported
		if parse != nil {
			err = parse(&a, &st, name, annotations[k])
		}
		if err != nil {
			a.Problems = append(a.Problems, fmt.Sprintf("annotation %s=%s: %v%s", k, intent.Quote(annotations[k]), err, problemOutcome(err)))
		}
	}
	b := st.b
	setAffinity(&b, st.aff)
	finishCanary(&a)
	finishRouting(&a)
	finishProxy(&a)
	finishAuth(&a)
	finishLimit(&a)
	finishExtAuth(&a)
	finishProxySSL(&a)
	finishClientAuth(&a)
	finishMirror(&a, &st.mirror)
	if b != (intent.Balancing{}) {
		if b.LoadBalance == "" {
			b.LoadBalance = config.LoadBalanceRoundRobin
		}
		a.Balancing = &b
	}
	return a
}

// errUnsupported marks annotations we do not implement.
var errUnsupported = errors.New("not supported")

// parseCoreAnnotation parses the annotations that set one field each.
func parseCoreAnnotation(a *intent.Settings, st *parseState, name, v string) error {
	if err := checkForbidden(v, name == "rewrite-target"); err != nil {
		return err
	}
	var err error
	switch name {
	case "proxy-connect-timeout":
		a.Location.ProxyConnectTimeout, err = parseTimeout(v)
	case "proxy-read-timeout":
		a.Location.ProxyReadTimeout, err = parseTimeout(v)
	case "proxy-send-timeout":
		a.Location.ProxySendTimeout, err = parseTimeout(v)
	case "proxy-body-size":
		a.Location.ProxyBodySize, err = parseSize(v)
	case "backend-protocol":
		a.Location.BackendProtocol, err = parseBackendProtocol(v)
	case "rewrite-target":
		a.Location.RewriteTarget, err = parseRewriteTarget(v)
	case "ssl-redirect":
		a.SSLRedirect, err = parseBoolPtr(v)
	case "force-ssl-redirect":
		a.ForceSSLRedirect, err = strconv.ParseBool(v)
		a.ForceSSLRedirectOff = err == nil && !a.ForceSSLRedirect
	case "use-regex":
		a.UseRegex, err = parseBool(v)
	case "ssl-passthrough":
		a.SSLPassthrough, err = parseBool(v)
	case "load-balance":
		st.b.LoadBalance, err = parseLoadBalance(v)
	case "affinity-canary-behavior":
		a.AffinityCanaryLegacy, err = parseCanaryBehavior(v)
	default:
		return errUnsupported
	}
	return err
}

// checkForbidden rejects the characters that could break out of an nginx
// directive or a Lua string: control characters (newlines included), ';',
// '{', '}', quotes, backslash and, unless dollarOK, '$'.
func checkForbidden(v string, dollarOK bool) error {
	if len(v) > intent.MaxValueLen {
		return fmt.Errorf("longer than %d characters", intent.MaxValueLen)
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\n' || c == '\r':
			return errors.New("contains a newline")
		case c < 0x20 || c == 0x7f:
			return errors.New("contains a control character")
		case c == ';' || c == '{' || c == '}' || c == '"' || c == '\'' || c == '`' || c == '\\':
			return fmt.Errorf("contains %q", c)
		case c == '$' && !dollarOK:
			return errors.New("contains '$' (nginx variables are not allowed here)")
		}
	}
	return nil
}

// parseTimeout parses a proxy timeout annotation in whole seconds, as
// ingress-nginx (an integer, written with "s"), within the bounds of the
// ConfigMap's proxy timeouts: 1 to maxProxyTimeout.
func parseTimeout(v string) (int, error) { return intent.ParseIntRange(v, 1, intent.MaxProxyTimeout) }

// parseSize parses an nginx size: digits with an optional k, m or g unit,
// at most MaxSizeBytes.
func parseSize(v string) (config.Size, error) {
	s := config.Size(v)
	if _, ok := s.Bytes(); !ok {
		return "", errors.New("must be an nginx size such as 8m, 512k or 0, at most 1024g")
	}
	return s, nil
}

func parseBoolPtr(v string) (*bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return nil, errors.New("must be true or false")
	}
	return &b, nil
}

// parseBackendProtocol accepts HTTP, HTTPS, GRPC, GRPCS and AUTO_HTTP (the
// request's scheme) in any case.
func parseBackendProtocol(v string) (string, error) {
	switch p := strings.ToUpper(v); p {
	case "HTTP", "HTTPS", "GRPC", "GRPCS", "AUTO_HTTP":
		return p, nil
	case "FCGI":
		return "", fmt.Errorf("%w: FCGI backends need fastcgi_param lines per Ingress (fastcgi-index, fastcgi-params-configmap), which nginx.conf cannot hold without a reload", errUnsupported)
	}
	return "", errors.New("must be one of HTTP, HTTPS, GRPC, GRPCS, AUTO_HTTP")
}

// parseRewriteTarget accepts an absolute path of allowed path characters in
// which '$' may only start a capture reference $0 to $9.
func parseRewriteTarget(v string) (string, error) {
	if !strings.HasPrefix(v, "/") {
		return "", intent.ErrPathRelative
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '$' {
			if i+1 >= len(v) || v[i+1] < '0' || v[i+1] > '9' {
				return "", errors.New("'$' may only start a capture reference $0 to $9")
			}
			i++
			continue
		}
		if !intent.PathChar(c) {
			return "", intent.ErrPathChars
		}
	}
	return v, nil
}

func parseLoadBalance(v string) (string, error) {
	if v == config.LoadBalanceRoundRobin || v == config.LoadBalanceEWMA {
		return v, nil
	}
	return "", errors.New("must be round_robin or ewma")
}
