package events_test

import (
	"errors"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

func TestKindTokens(t *testing.T) {
	want := map[events.Kind]string{
		events.KindIngress: "ingress", events.KindIngressClass: "ingressclass", events.KindService: "service",
		events.KindEndpointSlice: "endpointslice", events.KindSecret: "secret", events.KindConfigMap: "configmap",
		events.KindGatewayClass: "gatewayclass", events.KindGateway: "gateway", events.KindHTTPRoute: "httproute", events.KindGRPCRoute: "grpcroute",
		events.KindReferenceGrant: "referencegrant", events.KindNamespace: "namespace",
		events.KindBackendTLSPolicy: "backendtlspolicy",
		events.KindTLSRoute:         "tlsroute", events.KindTCPRoute: "tcproute", events.KindUDPRoute: "udproute",
	}
	if len(events.Kinds) != len(want) {
		t.Fatalf("Kinds has %d kinds, want %d", len(events.Kinds), len(want))
	}
	for _, k := range events.Kinds {
		tok := events.KindToken(k)
		if tok != want[k] {
			t.Errorf("KindToken(%s) = %q, want %q", k, tok, want[k])
		}
		back, err := events.KindFromToken(tok)
		if err != nil || back != k {
			t.Errorf("KindFromToken(%q) = %q, %v; want %q", tok, back, err, k)
		}
	}
	if tok := events.KindToken("Pod"); tok != "" {
		t.Errorf("KindToken(Pod) = %q, want empty", tok)
	}
	if _, err := events.KindFromToken("pod"); !errors.Is(err, events.ErrBadSubject) {
		t.Errorf("KindFromToken(pod) error = %v, want ErrBadSubject", err)
	}
}

func TestSubjectRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name, prefix       string
		kind               events.Kind
		namespace, objName string
		want               string
	}{
		{"namespaced", "ingress", events.KindIngress, "shop", "web", "ingress.ingress.shop.web"},
		{"dots in name", "ingress", events.KindSecret, "shop", "www.shop.example.com", "ingress.secret.shop.www_shop_example_com"},
		{"cluster-scoped", "ingress", events.KindIngressClass, "", "nginx", "ingress.ingressclass._.nginx"},
		{"cluster-scoped dotted", "ingress", events.KindIngressClass, "", "nginx.example.com", "ingress.ingressclass._.nginx_example_com"},
		{"dotted prefix", "prod.ingress", events.KindEndpointSlice, "shop", "web-x7k2p", "prod.ingress.endpointslice.shop.web-x7k2p"},
		{"dotted namespace", "ingress", events.KindConfigMap, "a.b", "c", "ingress.configmap.a_b.c"},
		{"service", "i", events.KindService, "default", "kubernetes", "i.service.default.kubernetes"},
		{"namespace", "ingress", events.KindNamespace, "", "shop", "ingress.namespace._.shop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			subj := events.Subject(tc.prefix, tc.kind, tc.namespace, tc.objName)
			if subj != tc.want {
				t.Fatalf("Subject = %q, want %q", subj, tc.want)
			}
			k, ns, name, err := events.ParseSubject(tc.prefix, subj)
			if err != nil {
				t.Fatalf("ParseSubject(%q): %v", subj, err)
			}
			if k != tc.kind || ns != tc.namespace || name != tc.objName {
				t.Errorf("ParseSubject(%q) = %q, %q, %q; want %q, %q, %q", subj, k, ns, name, tc.kind, tc.namespace, tc.objName)
			}
		})
	}
}

func TestParseSubjectErrors(t *testing.T) {
	for _, tc := range []struct{ name, prefix, subject string }{
		{"other prefix", "ingress", "other.ingress.a.b"},
		{"prefix of prefix", "ingress", "ingressx.ingress.a.b"},
		{"empty prefix", "", ".ingress.a.b"},
		{"too few tokens", "ingress", "ingress.ingress.a"},
		{"too many tokens", "ingress", "ingress.ingress.a.b.c"},
		{"unknown kind", "ingress", "ingress.pod.a.b"},
		{"empty name", "ingress", "ingress.ingress.a."},
		{"empty namespace", "ingress", "ingress.ingress..b"},
		{"wildcard", "ingress", "ingress.ingress.*.b"},
		{"full wildcard", "ingress", "ingress.ingress.a.>"},
		{"space", "ingress", "ingress.ingress.a.b c"},
		{"status subject", "ingress", "ingress-status.syncer.pod-0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, _, err := events.ParseSubject(tc.prefix, tc.subject); !errors.Is(err, events.ErrBadSubject) {
				t.Errorf("ParseSubject(%q, %q) error = %v, want ErrBadSubject", tc.prefix, tc.subject, err)
			}
		})
	}
}

func TestFilterSubjectAndPrefix(t *testing.T) {
	if got := events.FilterSubject("ingress"); got != "ingress.>" {
		t.Errorf("FilterSubject = %q", got)
	}
	for _, tc := range []struct {
		prefix string
		ok     bool
	}{
		{"ingress", true}, {"prod.ingress", true}, {"", false}, {"a..b", false}, {"a.*", false}, {"a.>", false}, {"a b", false}, {".a", false},
	} {
		if err := events.ValidatePrefix(tc.prefix); (err == nil) != tc.ok {
			t.Errorf("ValidatePrefix(%q) = %v, want ok=%v", tc.prefix, err, tc.ok)
		}
	}
}
