package ingress

import (
	"cmp"
	"fmt"
	"sort"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	networkingv1 "k8s.io/api/networking/v1"
)

// translate makes the route intents of Ingress ing (see intent.go): its
// rules' hosts and paths, spec.tls and spec.defaultBackend. Paths are
// normalized as buildPath serves them: ImplementationSpecific ones are
// regular expressions with use-regex or a rewrite-target (not on a canary,
// whose paths name the main Ingress's).
func translateIngress(e *intent.Entry, ing *networkingv1.Ingress) {
	if ref := ing.Spec.DefaultBackend; ref != nil {
		r := backendRefOf(ref)
		e.DefaultBackend = &r
	}
	for i := range ing.Spec.Rules {
		rule := &ing.Spec.Rules[i]
		h := intent.Host{Host: cmp.Or(rule.Host, config.DefaultServerName), Raw: rule.Host}
		if rule.Host != "" {
			h.Err = intent.ValidHost(rule.Host)
		}
		if rule.HTTP != nil {
			h.Paths = make([]intent.Path, len(rule.HTTP.Paths))
			for j := range rule.HTTP.Paths {
				h.Paths[j] = ingressPathIntent(e, &rule.HTTP.Paths[j])
			}
		}
		e.Rules = append(e.Rules, h)
	}
	for _, t := range ing.Spec.TLS {
		e.TLS = append(e.TLS, intent.TLS{Hosts: t.Hosts, Secret: t.SecretName})
	}
	if e.Settings.Canary != nil {
		e.CanaryNotes = canaryNotes(ing)
	}
}

func ingressPathIntent(e *intent.Entry, p *networkingv1.HTTPIngressPath) intent.Path {
	out := intent.Path{Raw: p.Path, TypeName: string(networkingv1.PathTypeImplementationSpecific), Backend: backendRefOf(&p.Backend),
		Impl: p.PathType == nil || *p.PathType == networkingv1.PathTypeImplementationSpecific}
	if p.PathType != nil {
		out.TypeName = string(*p.PathType)
	}
	// As ingress-nginx, a rewrite-target equal to the path is no rewrite.
	t := e.Settings.Location.RewriteTarget
	regex := e.Settings.Canary == nil && (e.Settings.UseRegex || t != "" && t != cmp.Or(p.Path, "/"))
	out.Path, out.PathType, out.Err = normalizePath(p, regex)
	return out
}

// backendRefOf is the reference of an Ingress backend.
func backendRefOf(b *networkingv1.IngressBackend) intent.BackendRef {
	if b.Service == nil {
		return intent.BackendRef{Unsupported: true}
	}
	return intent.BackendRef{Service: b.Service.Name, PortName: b.Service.Port.Name, PortNumber: b.Service.Port.Number}
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
		if err := intent.ValidateRegexPath(path); err != nil {
			return "", "", err
		}
		return path, config.PathRegex, nil
	}
	if err := intent.ValidatePath(path); err != nil {
		return "", "", err
	}
	if pathType == config.PathPrefix {
		path = intent.NormalizePrefix(path)
	}
	return path, pathType, nil
}

// noAnnotations are the parsed annotations of an Ingress without any
// nginx.ingress.kubernetes.io/ one, shared by all of them (about 1.5 KB
// each otherwise, a third of the Store at 50k Ingresses).
var noAnnotations = parseAnnotations(nil)

// annotationsOf parses the annotations of an Ingress, sharing
// noAnnotations when none is ours.
func annotationsOf(annotations map[string]string) *intent.Settings {
	for k := range annotations {
		if strings.HasPrefix(k, AnnotationPrefix) {
			a := parseAnnotations(annotations)
			return &a
		}
	}
	return &noAnnotations
}

func newIngressEntry(key intent.Key, ing *networkingv1.Ingress) *intent.Entry {
	e := &intent.Entry{Key: key, Name: key.String(), Object: ing, Settings: annotationsOf(ing.Annotations),
		Created: ing.CreationTimestamp.Unix(), CreatedNanos: ing.CreationTimestamp.Nanosecond(),
		Origin:        intent.Origin{Kind: intent.KindIngress, Namespace: key.Namespace, Name: key.Name, Generation: ing.Generation},
		SettingPrefix: "annotation " + AnnotationPrefix}
	translateIngress(e, ing)
	e.Problems = e.Settings.Problems
	if len(e.Settings.Snippets) > 0 {
		e.Refused = refuseSnippets(e.Settings.Snippets)
	}
	addService := func(b *networkingv1.IngressBackend) {
		if b != nil && b.Service != nil && b.Service.Name != "" {
			e.Services = append(e.Services, intent.Key{Namespace: key.Namespace, Name: b.Service.Name})
		}
	}
	addService(ing.Spec.DefaultBackend)
	if s := e.Settings.ErrorService; s != "" {
		e.Services = append(e.Services, intent.Key{Namespace: key.Namespace, Name: s})
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
			e.Secrets = append(e.Secrets, intent.Key{Namespace: key.Namespace, Name: t.SecretName})
		}
	}
	for _, ref := range []string{e.Settings.Auth.Secret, e.Settings.ClientAuth.Secret, e.Settings.ProxySSL.Secret} {
		if k, ok := intent.RefKey(key.Namespace, ref); ok {
			e.Secrets = append(e.Secrets, k)
		}
	}
	// ConfigMaps of another namespace too: Build reads none, but a
	// change of one rebuilds, as it always has.
	for _, ref := range []string{e.Settings.Upstream.CustomHeaders, e.Settings.ExtAuth.ProxySetHeaders} {
		if ref != "" {
			k, _ := intent.RefKey(key.Namespace, ref)
			e.ConfigMaps = append(e.ConfigMaps, k)
		}
	}
	e.Hosts = ingressHosts(ing)
	e.Services = intent.UniqueKeys(e.Services)
	e.Secrets = intent.UniqueKeys(e.Secrets)
	e.ConfigMaps = intent.UniqueKeys(e.ConfigMaps)
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
		out = intent.CompactStrings(out)
	}
	return out
}
