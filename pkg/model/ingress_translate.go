package model

import (
	"cmp"
	"fmt"
	"sort"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	networkingv1 "k8s.io/api/networking/v1"
)

// translate makes the route intents of Ingress ing (see intent.go): its
// rules' hosts and paths, spec.tls and spec.defaultBackend. Paths are
// normalized as buildPath serves them: ImplementationSpecific ones are
// regular expressions with use-regex or a rewrite-target (not on a canary,
// whose paths name the main Ingress's).
func translateIngress(e *ingressEntry, ing *networkingv1.Ingress) {
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
				h.paths[j] = ingressPathIntent(e, &rule.HTTP.Paths[j])
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

func ingressPathIntent(e *ingressEntry, p *networkingv1.HTTPIngressPath) pathIntent {
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

// noAnnotations are the parsed annotations of an Ingress without any
// nginx.ingress.kubernetes.io/ one, shared by all of them (about 1.5 KB
// each otherwise, a third of the Store at 50k Ingresses).
var noAnnotations = parseAnnotations(nil)

// annotationsOf parses the annotations of an Ingress, sharing
// noAnnotations when none is ours.
func annotationsOf(annotations map[string]string) *ingressAnnotations {
	for k := range annotations {
		if strings.HasPrefix(k, AnnotationPrefix) {
			a := parseAnnotations(annotations)
			return &a
		}
	}
	return &noAnnotations
}

func newIngressEntry(key objectKey, ing *networkingv1.Ingress) *ingressEntry {
	e := &ingressEntry{key: key, name: key.String(), object: ing, ann: annotationsOf(ing.Annotations),
		created: ing.CreationTimestamp.Unix(), createdNanos: ing.CreationTimestamp.Nanosecond(),
		origin:        Origin{Kind: kindIngress, Namespace: key.Namespace, Name: key.Name, Generation: ing.Generation},
		settingPrefix: "annotation " + AnnotationPrefix}
	translateIngress(e, ing)
	e.problems = e.ann.problems
	if len(e.ann.snippets) > 0 {
		e.refused = refuseSnippets(e.ann.snippets)
	}
	addService := func(b *networkingv1.IngressBackend) {
		if b != nil && b.Service != nil && b.Service.Name != "" {
			e.services = append(e.services, objectKey{key.Namespace, b.Service.Name})
		}
	}
	addService(ing.Spec.DefaultBackend)
	if s := e.ann.errorService; s != "" {
		e.services = append(e.services, objectKey{key.Namespace, s})
	}
	for i := range ing.Spec.Rules {
		if http := ing.Spec.Rules[i].HTTP; http != nil {
			for j := range http.Paths {
				addService(&http.Paths[j].Backend)
			}
		}
	}
	for _, t := range ing.Spec.TLS {
		if t.SecretName != "" {
			e.secrets = append(e.secrets, objectKey{key.Namespace, t.SecretName})
		}
	}
	for _, ref := range []string{e.ann.auth.secret, e.ann.clientAuth.secret, e.ann.proxySSL.secret} {
		if k, ok := refKey(key.Namespace, ref); ok {
			e.secrets = append(e.secrets, k)
		}
	}
	// ConfigMaps of another namespace too: Build reads none, but a
	// change of one rebuilds, as it always has.
	for _, ref := range []string{e.ann.upstream.customHeaders, e.ann.extAuth.proxySetHeaders} {
		if ref != "" {
			k, _ := refKey(key.Namespace, ref)
			e.configMaps = append(e.configMaps, k)
		}
	}
	e.hosts = ingressHosts(ing)
	e.services = uniqueKeys(e.services)
	e.secrets = uniqueKeys(e.secrets)
	e.configMaps = uniqueKeys(e.configMaps)
	return e
}

// ingressHosts returns the hosts whose Servers and certificates ing can
// contribute to: the hosts of its rules (DefaultServerName for a rule
// without host) and of its spec.tls, valid or not, and DefaultServerName
// for a spec.defaultBackend (a canary's goes to the default server's
// locations), sorted, unique.
func ingressHosts(ing *networkingv1.Ingress) []string {
	var out []string
	if ing.Spec.DefaultBackend != nil {
		out = append(out, config.DefaultServerName)
	}
	for i := range ing.Spec.Rules {
		out = append(out, cmp.Or(ing.Spec.Rules[i].Host, config.DefaultServerName))
	}
	for _, t := range ing.Spec.TLS {
		out = append(out, t.Hosts...)
	}
	if len(out) > 1 {
		sort.Strings(out)
		out = compactStrings(out)
	}
	return out
}
