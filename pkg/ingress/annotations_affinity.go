package ingress

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"errors"
	"strings"
)

// Session affinity and consistent hashing, as ingress-nginx v1.15
// documents and tests them (annotations.md "Session Affinity" and "Custom
// NGINX upstream hashing"). They are backend-level settings: the oldest
// Ingress routing to a backend that sets any of them decides (see
// builder.backend).
//
//   - affinity: cookie (the only type). Without it the session-cookie-*
//     and affinity-mode annotations mean nothing and are ignored.
//   - affinity-mode: balanced (default: the cookie holds a random key
//     hashed onto the current endpoints, so scaling moves some sessions)
//     or persistent (the cookie names the endpoint; it moves only when
//     that endpoint is gone).
//   - affinity-canary-behavior: sticky (default: the canary backend of a
//     canary Ingress gets the main backend's affinity, so a client served
//     by the canary stays there) or legacy (it does not). Read on the
//     canary Ingress.
//   - session-cookie-name (default INGRESSCOOKIE), -path (default: the
//     path of the Ingress's location), -domain, -max-age and -expires
//     (seconds), -secure (true: always Secure; else Secure on HTTPS
//     requests), -samesite (None, Lax, Strict in any case),
//     -conditional-samesite-none (no SameSite=None for browsers that
//     reject it), -change-on-failure (a failed endpoint moves the client
//     and its cookie).
//   - upstream-hash-by: nginx variables and text ($var, ${var}, letters,
//     digits, '-' and '_'), hashed consistently onto the endpoints;
//     upstream-hash-by-subset and -subset-size (default 3) hash onto
//     groups of that many endpoints and pick one of the group at random.
//     Affinity, when set, wins over hashing.

// affinityInput collects the affinity and hash annotations before they are
// combined by setAffinity.
type affinityInput struct {
	cookie     bool
	spec       config.Affinity
	subset     bool
	subsetSize int
}

// applyBalancing parses one affinity or hashing annotation; ok is false
// for other names.
func applyBalancing(name, v string, b *intent.Balancing, in *affinityInput) (ok bool, err error) {
	s := &in.spec
	switch name {
	case "upstream-hash-by-subset":
		in.subset, err = parseBool(v)
	case "upstream-hash-by-subset-size":
		in.subsetSize, err = parseSubsetSize(v)
	case "affinity":
		if in.cookie = strings.TrimSpace(v) == "cookie"; !in.cookie {
			err = errors.New("only cookie is supported")
		}
	case "affinity-mode":
		err = parseOption(v, config.AffinityBalanced, config.AffinityPersistent)
		if err == nil {
			s.Mode = strings.TrimSpace(v)
		}
	case "session-cookie-name":
		s.CookieName, err = parseCookieName(v)
	case "session-cookie-path":
		s.CookiePath, err = parseCookiePath(v)
	case "session-cookie-domain":
		s.CookieDomain, err = parseCookieDomain(v)
	case "session-cookie-max-age":
		s.CookieMaxAge, err = intent.ParseIntRange(v, 1, intent.MaxCookieSeconds)
	case "session-cookie-expires":
		s.CookieExpires, err = intent.ParseIntRange(v, 1, intent.MaxCookieSeconds)
	case "session-cookie-secure":
		s.CookieSecure, err = parseBool(v)
	case "session-cookie-samesite":
		s.CookieSameSite, err = parseSameSite(v)
	case "session-cookie-conditional-samesite-none":
		s.ConditionalSameSiteNone, err = parseBool(v)
	case "session-cookie-change-on-failure":
		s.ChangeOnFailure, err = parseBool(v)
	default:
		return false, nil
	}
	return true, err
}

// parseCanaryBehavior parses affinity-canary-behavior: true for legacy.
func parseCanaryBehavior(v string) (legacy bool, err error) {
	if err := parseOption(v, "sticky", "legacy"); err != nil {
		return false, err
	}
	return strings.TrimSpace(v) == "legacy", nil
}

// setAffinity combines the affinity and hash annotations. The
// session-cookie-* annotations and affinity-mode mean nothing without
// affinity=cookie and are then ignored, as upstream-hash-by-subset* are
// without upstream-hash-by.
func setAffinity(b *intent.Balancing, in affinityInput) {
	if b.HashBy != "" && in.subset {
		b.SubsetSize = in.subsetSize
		if b.SubsetSize == 0 {
			b.SubsetSize = intent.DefaultSubsetSize
		}
	}
	if !in.cookie {
		return
	}
	a := in.spec
	if a.CookieName == "" {
		a.CookieName = config.DefaultCookieName
	}
	if a.Mode == "" {
		a.Mode = config.AffinityBalanced
	}
	b.Affinity = &a
}

// parseOption accepts one of options, surrounding spaces trimmed, in the
// case given (as ingress-nginx's validators of these annotations).
func parseOption(v string, options ...string) error {
	v = strings.TrimSpace(v)
	for _, o := range options {
		if v == o {
			return nil
		}
	}
	return errors.New("must be " + strings.Join(options, " or "))
}

// parseHashBy accepts what ingress-nginx's upstream-hash-by accepts: nginx
// variables ($name, ${name}) and text made of letters, digits, '-', '_',
// '$', '{' and '}', such as "$request_uri", "$host$request_uri",
// "$cookie_JSESSIONID" or "${request_uri}-text-value".
func parseHashBy(v string) (string, error) {
	if v == "" || len(v) > intent.MaxHashByLen {
		return "", errors.New("must be 1 to 256 characters")
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !intent.IsAlnum(c) && strings.IndexByte("-_${}", c) < 0 {
			return "", errors.New("may only contain nginx variables ($name, ${name}), letters, digits, '-' and '_'")
		}
	}
	return v, nil
}

// parseSubsetSize parses upstream-hash-by-subset-size: 1 to 1000, and 0
// for the default 3 (as ingress-nginx).
func parseSubsetSize(v string) (int, error) {
	n, err := intent.ParseIntRange(v, 0, intent.MaxSubsetSize)
	if n == 0 && err == nil {
		n = intent.DefaultSubsetSize
	}
	return n, err
}

// parseCookieName accepts an RFC 6265 cookie name made of letters, digits
// and !#%&*+-.^_|~, at most 64 characters.
func parseCookieName(v string) (string, error) {
	if v == "" || len(v) > 64 {
		return "", errors.New("must be 1 to 64 token characters")
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !intent.IsAlnum(c) && strings.IndexByte("!#%&*+-.^_|~", c) < 0 {
			return "", errors.New("may only contain letters, digits and !#%&*+-.^_|~")
		}
	}
	return v, nil
}

func parseCookiePath(v string) (string, error) {
	if err := intent.ValidatePath(v); err != nil {
		return "", err
	}
	return v, nil
}

// parseCookieDomain accepts a domain: letters, digits, '-' and '.', an
// optional leading '.', at most 253 characters.
func parseCookieDomain(v string) (string, error) {
	d := strings.TrimPrefix(v, ".")
	if d == "" || len(v) > intent.MaxCookieDomain {
		return "", errors.New("must be a domain name")
	}
	for i := 0; i < len(d); i++ {
		if c := d[i]; !intent.IsAlnum(c) && c != '-' && c != '.' {
			return "", errors.New("must be a domain name (letters, digits, '-' and '.')")
		}
	}
	return v, nil
}

// parseSameSite accepts None, Lax and Strict in any case and returns the
// attribute's usual spelling.
func parseSameSite(v string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "none":
		return "None", nil
	case "lax":
		return "Lax", nil
	case "strict":
		return "Strict", nil
	}
	return "", errors.New("must be None, Lax or Strict")
}

// noteAffinity is the registry's note on affinity: how it differs from
// ingress-nginx.
const noteAffinity = "per backend (Service port): the oldest Ingress routing there decides every affinity setting, every path routed there sets the cookie, and without session-cookie-path its Path is the common path of that Ingress's paths to the backend (ingress-nginx: only the paths of Ingresses with affinity set it, each with its own Path, and the newest Ingress's cookie settings win)"
