package ingress

import (
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// The annotation parsers, one per group of annotations that build one part
// of Settings together. The registry (registry.go) is the one
// place that says which parser claims which annotation name: parseAnnotations
// looks the name up there, so no parser depends on the order in which the
// others are tried, and an annotation the registry does not claim is
// reported as not supported.

// annotationParser parses one annotation, name without the prefix, into a;
// st holds what the annotations of one Ingress build together.
type annotationParser func(a *intent.Settings, st *parseState, name, v string) error

// parseState is what several annotations of one Ingress build together:
// the balancing of its backends.
type parseState struct {
	b      intent.Balancing
	aff    affinityInput
	mirror mirrorInput
}

// prefixClaims are the name families whose parser claims every name, even
// one it does not know: an unknown auth-tls-* name makes the client
// certificate verification fail closed, and an unknown canary-* name is
// reported by the canary parser.
var prefixClaims = []struct {
	prefix string
	parse  annotationParser
}{
	{"auth-tls-", parseClientAuthAnnotation},
	{"canary", parseCanaryAnnotation},
}

// annotationParserOf returns the parser that claims the annotation name
// (without the prefix), or nil; refused is true for snippets.
func annotationParserOf(name string) (parse annotationParser, refused bool) {
	if e, ok := registry().annotationIndex[name]; ok {
		return e.parse, e.Status == StatusRefused
	}
	if strings.HasSuffix(name, "-snippet") {
		return nil, true
	}
	for _, c := range prefixClaims {
		if strings.HasPrefix(name, c.prefix) {
			return c.parse, false
		}
	}
	return nil, false
}

// claimed turns the (ok, err) of a group parser into the error of one the
// registry chose: a name the group does not know is not supported.
func claimed(ok bool, err error) error {
	if !ok {
		return errUnsupported
	}
	return err
}

func parseCanaryAnnotation(a *intent.Settings, _ *parseState, name, v string) error {
	return applyCanary(a, name, v)
}

// parseLimitAnnotation: the limits fail closed, with a Problem of their
// own (applyLimit).
func parseLimitAnnotation(a *intent.Settings, _ *parseState, name, v string) error {
	applyLimit(a, name, v)
	return nil
}

// parseHashByAnnotation: not checkForbidden, as "${var}" has braces;
// parseHashBy is an allow-list of letters, digits and -_${}.
func parseHashByAnnotation(_ *intent.Settings, st *parseState, _, v string) (err error) {
	st.b.HashBy, err = parseHashBy(v)
	return err
}

// parseSourceRangeAnnotation: every error fails closed; not
// checkForbidden, as 1000 CIDRs are longer than maxValueLen and
// parseSourceRange is an allow-list.
func parseSourceRangeAnnotation(a *intent.Settings, _ *parseState, name, v string) error {
	return setSourceRange(a, name, v)
}

// The access control parsers are allow-lists that fail closed.

func parseAuthAnnotation(a *intent.Settings, _ *parseState, name, v string) error {
	return claimed(applyAuth(a, name, v))
}

func parseExtAuthAnnotation(a *intent.Settings, _ *parseState, name, v string) error {
	return claimed(applyExtAuth(a, name, v))
}

func parseProxySSLAnnotation(a *intent.Settings, _ *parseState, name, v string) error {
	return claimed(applyProxySSL(a, name, v), nil)
}

func parseClientAuthAnnotation(a *intent.Settings, _ *parseState, name, v string) error {
	return claimed(applyClientAuth(a, name, v), nil)
}

// The other parsers refuse the characters checkForbidden names first.

func parseBalancingAnnotation(_ *intent.Settings, st *parseState, name, v string) error {
	if err := checkForbidden(v, false); err != nil {
		return err
	}
	return claimed(applyBalancing(name, v, &st.b, &st.aff))
}

func parseRoutingAnnotation(a *intent.Settings, _ *parseState, name, v string) error {
	if err := checkForbidden(v, false); err != nil {
		return err
	}
	return claimed(applyRouting(a, name, v))
}

func parseUpstreamAnnotation(a *intent.Settings, _ *parseState, name, v string) error {
	if err := checkForbidden(v, false); err != nil {
		return err
	}
	return claimed(applyUpstream(a, name, v))
}

func parseProxyAnnotation(a *intent.Settings, _ *parseState, name, v string) error {
	if err := checkForbidden(v, false); err != nil {
		return err
	}
	return claimed(applyProxy(a, name, v))
}
