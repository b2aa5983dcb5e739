package model

import (
	"cmp"
	"fmt"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	networkingv1 "k8s.io/api/networking/v1"
)

// translate makes the route intents of Ingress ing (see intent.go): its
// rules' hosts and paths, spec.tls and spec.defaultBackend. Paths are
// normalized as buildPath serves them: ImplementationSpecific ones are
// regular expressions with use-regex or a rewrite-target (not on a canary,
// whose paths name the main Ingress's).
func (e *ingressEntry) translate(ing *networkingv1.Ingress) {
	if ref := ing.Spec.DefaultBackend; ref != nil {
		r := backendRefOf(ref)
		e.defaultBackend = &r
	}
	for i := range ing.Spec.Rules {
		rule := &ing.Spec.Rules[i]
		h := hostIntent{host: cmp.Or(rule.Host, config.DefaultServerName), raw: rule.Host}
		if rule.Host != "" {
			h.err = validHost(rule.Host)
		}
		if rule.HTTP != nil {
			h.paths = make([]pathIntent, len(rule.HTTP.Paths))
			for j := range rule.HTTP.Paths {
				h.paths[j] = e.pathIntent(&rule.HTTP.Paths[j])
			}
		}
		e.rules = append(e.rules, h)
	}
	for _, t := range ing.Spec.TLS {
		e.tls = append(e.tls, tlsIntent{hosts: t.Hosts, secret: t.SecretName})
	}
	if e.ann.canary != nil {
		e.canaryNotes = canaryNotes(ing)
	}
}

func (e *ingressEntry) pathIntent(p *networkingv1.HTTPIngressPath) pathIntent {
	out := pathIntent{raw: p.Path, typeName: string(networkingv1.PathTypeImplementationSpecific), backend: backendRefOf(&p.Backend),
		impl: p.PathType == nil || *p.PathType == networkingv1.PathTypeImplementationSpecific}
	if p.PathType != nil {
		out.typeName = string(*p.PathType)
	}
	// As ingress-nginx, a rewrite-target equal to the path is no rewrite.
	t := e.ann.location.RewriteTarget
	regex := e.ann.canary == nil && (e.ann.useRegex || t != "" && t != cmp.Or(p.Path, "/"))
	out.path, out.pathType, out.err = normalizePath(p, regex)
	return out
}

// backendRefOf is the reference of an Ingress backend.
func backendRefOf(b *networkingv1.IngressBackend) backendRef {
	if b.Service == nil {
		return backendRef{unsupported: true}
	}
	return backendRef{service: b.Service.Name, portName: b.Service.Port.Name, portNumber: b.Service.Port.Number}
}

// normalizePath validates the path of an Ingress rule and returns it with
// its path type as built. regex makes ImplementationSpecific paths regular
// expressions (use-regex, rewrite-target).
func normalizePath(p *networkingv1.HTTPIngressPath, regex bool) (string, config.PathType, error) {
	path := p.Path
	pathType := config.PathPrefix
	if p.PathType != nil && *p.PathType == networkingv1.PathTypeExact {
		pathType = config.PathExact
	}
	isImpl := p.PathType == nil || *p.PathType == networkingv1.PathTypeImplementationSpecific
	if path == "" && isImpl {
		path = "/"
	}
	if p.PathType != nil && !isImpl && pathType != config.PathExact && *p.PathType != networkingv1.PathTypePrefix {
		return "", "", fmt.Errorf("unknown pathType %q", *p.PathType)
	}
	if isImpl && regex {
		if err := validateRegexPath(path); err != nil {
			return "", "", err
		}
		return path, config.PathRegex, nil
	}
	if err := validatePath(path); err != nil {
		return "", "", err
	}
	if pathType == config.PathPrefix {
		path = normalizePrefix(path)
	}
	return path, pathType, nil
}
