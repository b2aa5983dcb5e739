package events

import (
	"fmt"
	"strings"
)

// clusterScopeToken stands for the empty namespace of cluster-scoped objects.
// Kubernetes names never contain '_', so it cannot collide with a namespace.
const clusterScopeToken = "_"

// KindToken is the subject token of a kind: its name in lower case
// ("ingress", "ingressclass", "service", "endpointslice", "secret",
// "configmap", "namespace", "gatewayclass", "gateway", "httproute", "referencegrant", "backendtlspolicy").
// It is "" for a kind this package does not know.
func KindToken(k Kind) string {
	switch k {
	case KindIngress:
		return "ingress"
	case KindIngressClass:
		return "ingressclass"
	case KindService:
		return "service"
	case KindEndpointSlice:
		return "endpointslice"
	case KindSecret:
		return "secret"
	case KindConfigMap:
		return "configmap"
	case KindNamespace:
		return "namespace"
	}
	return gatewayToken(k)
}

// KindFromToken is the inverse of KindToken. An unknown token is an error
// wrapping ErrBadSubject.
func KindFromToken(tok string) (Kind, error) {
	for _, k := range Kinds {
		if KindToken(k) == tok {
			return k, nil
		}
	}
	return "", fmt.Errorf("%w: unknown kind token %q", ErrBadSubject, tok)
}

// Subject is the subject of an object: <prefix>.<kind>.<namespace>.<name>.
// Dots in the namespace and name become '_' (Kubernetes names contain dots,
// the NATS token separator, and never '_', so the mapping is lossless), and
// the empty namespace of a cluster-scoped object is written "_".
//
// Subject does not validate its input; Encode and Publisher.Publish reject
// events whose subject would not be valid.
func Subject(prefix string, k Kind, namespace, name string) string {
	ns := clusterScopeToken
	if namespace != "" {
		ns = encodeToken(namespace)
	}
	return prefix + "." + KindToken(k) + "." + ns + "." + encodeToken(name)
}

// ParseSubject is the exact inverse of Subject. A subject outside prefix,
// with a wrong number of tokens, an unknown kind or an invalid token is an
// error wrapping ErrBadSubject.
func ParseSubject(prefix, subject string) (k Kind, namespace, name string, err error) {
	rest, ok := strings.CutPrefix(subject, prefix+".")
	if !ok || prefix == "" {
		return "", "", "", fmt.Errorf("%w: %q is not under prefix %q", ErrBadSubject, subject, prefix)
	}
	toks := strings.Split(rest, ".")
	if len(toks) != 3 {
		return "", "", "", fmt.Errorf("%w: %q: want <prefix>.<kind>.<namespace>.<name>", ErrBadSubject, subject)
	}
	for _, tok := range toks {
		if !validToken(tok) {
			return "", "", "", fmt.Errorf("%w: %q: invalid token %q", ErrBadSubject, subject, tok)
		}
	}
	if k, err = KindFromToken(toks[0]); err != nil {
		return "", "", "", fmt.Errorf("%w: %q", err, subject)
	}
	if toks[1] != clusterScopeToken {
		namespace = decodeToken(toks[1])
	}
	return k, namespace, decodeToken(toks[2]), nil
}

// FilterSubject is the wildcard subject matching every object under prefix:
// "<prefix>.>".
func FilterSubject(prefix string) string { return prefix + ".>" }

// ValidatePrefix checks that prefix can start a subject: one or more
// non-empty tokens without wildcards or whitespace.
func ValidatePrefix(prefix string) error {
	if prefix == "" {
		return fmt.Errorf("%w: empty subject prefix", ErrBadSubject)
	}
	for tok := range strings.SplitSeq(prefix, ".") {
		if !validToken(tok) {
			return fmt.Errorf("%w: invalid subject prefix %q", ErrBadSubject, prefix)
		}
	}
	return nil
}

func encodeToken(s string) string { return strings.ReplaceAll(s, ".", "_") }

func decodeToken(s string) string { return strings.ReplaceAll(s, "_", ".") }

// validToken reports whether tok can be one token of a literal subject: not
// empty, no wildcard, no separator, no whitespace or control character.
func validToken(tok string) bool {
	if tok == "" || tok == "*" || tok == ">" {
		return false
	}
	for _, r := range tok {
		if r <= ' ' || r == 0x7f || r == '.' || r == '*' || r == '>' {
			return false
		}
	}
	return true
}
