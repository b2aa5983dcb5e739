package model

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
	"slices"

	"github.com/ingress-sync/ingress-sync/test/testkit/check"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func udpPort(name string, port int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: port, Protocol: corev1.ProtocolUDP}
}

func l4Options() Options {
	o := testOptions()
	o.TCPServicesConfigMap, o.UDPServicesConfigMap = "ingress/tcp", "ingress/udp"
	o.ReservedPorts = []int{80, 443, 10246}
	return o
}

// l4Objects: a database with a TCP port (two ready endpoints, one not
// ready) and a DNS server with a UDP and a TCP port of the same number.
func l4Objects() []runtime.Object {
	return one(
		service("data", "db", svcPort("pg", 5432)),
		slice("data", "db-1", "db", "pg", 5432, ready("10.0.0.2"), ready("10.0.0.1"), notReady("10.0.0.3")),
		service("kube-system", "dns", udpPort("dns", 53), svcPort("dns-tcp", 53)),
		slice("kube-system", "dns-1", "dns", "dns", 5353, ready("10.0.1.1")),
		slice("kube-system", "dns-2", "dns", "dns-tcp", 5300, ready("10.0.1.2")),
		service("data", "empty", svcPort("pg", 5432)),
	)
}

func TestBuildL4(t *testing.T) {
	tcp := func(port int, ns, svc, sp string, eps ...config.Endpoint) config.L4Service {
		if eps == nil {
			eps = []config.Endpoint{}
		}
		return config.L4Service{Protocol: config.L4TCP, Port: port, Namespace: ns, Service: svc, ServicePort: sp, Endpoints: eps}
	}
	withProxy := func(s config.L4Service, dec, enc bool) config.L4Service {
		s.DecodeProxy, s.EncodeProxy = dec, enc
		return s
	}
	udp := func(s config.L4Service) config.L4Service { s.Protocol = config.L4UDP; return s }
	pg := []config.Endpoint{ep("10.0.0.1", 5432), ep("10.0.0.2", 5432)}
	tests := map[string]struct {
		tcp, udp []string // key, value pairs
		want     []config.L4Service
		problems []string
	}{
		"by number": {tcp: []string{"9000", "data/db:5432"}, want: []config.L4Service{tcp(9000, "data", "db", "5432", pg...)}},
		"by name":   {tcp: []string{"9000", "data/db:pg"}, want: []config.L4Service{tcp(9000, "data", "db", "pg", pg...)}},
		"proxy options": {tcp: []string{"9000", "data/db:5432:PROXY", "9001", "data/db:5432::proxy", "9002", "data/db:5432:PROXY:PROXY"},
			want: []config.L4Service{withProxy(tcp(9000, "data", "db", "5432", pg...), true, false),
				withProxy(tcp(9001, "data", "db", "5432", pg...), false, true),
				withProxy(tcp(9002, "data", "db", "5432", pg...), true, true)}},
		"udp and tcp of one number": {tcp: []string{"53", "kube-system/dns:53"}, udp: []string{"53", "kube-system/dns:53"},
			want: []config.L4Service{tcp(53, "kube-system", "dns", "53", ep("10.0.1.2", 5300)), udp(tcp(53, "kube-system", "dns", "53", ep("10.0.1.1", 5353)))}},
		"no ready endpoints keeps the listener": {tcp: []string{"9000", "data/empty:5432"}, want: []config.L4Service{tcp(9000, "data", "empty", "5432")}},
		"bad entries never block the others": {
			tcp: []string{"9000", "data/db:5432", "0", "data/db:5432", "65536", "data/db:5432", "09001", "data/db:5432",
				"http", "data/db:5432", "80", "data/db:5432", "9002", "data/db", "9003", "data/missing:5432", "9004", "data/db:5433",
				"9005", "data/db:5432:PROXY:PROXY:PROXY", "9006", "data/db:5432:SSL", "9007", "Data/db:5432", "9008", "data/db:pg;x",
				"9009", "data/db:0", "9010", "kube-system/dns:dns"},
			udp:  []string{"5353", "kube-system/dns:53:PROXY"},
			want: []config.L4Service{tcp(9000, "data", "db", "5432", pg...)},
			problems: []string{
				`TCP port "0": is not a port number`, `TCP port "09001": is not a port number`, `TCP port "65536": is not a port number`,
				`TCP port "80": is reserved`, `TCP port "9002": value "data/db": must be namespace/service:port`,
				`TCP port "9003": service data/missing not found`, `TCP port "9004": service data/db has no TCP port 5433`,
				`TCP port "9005": value "data/db:5432:PROXY:PROXY:PROXY": must be`, `TCP port "9006": value "data/db:5432:SSL": option "SSL" is not PROXY`,
				`TCP port "9007": value "Data/db:5432": "Data/db" is not namespace/service`, `TCP port "9008": value "data/db:pg;x": service port "pg;x"`,
				`TCP port "9009": value "data/db:0": service port "0"`, `TCP port "9010": service kube-system/dns has no TCP port dns`,
				`TCP port "http": is not a port number`, `UDP port "5353": value "kube-system/dns:53:PROXY": PROXY is a TCP option`,
			}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			all := append(l4Objects(), fixtures.ConfigMap("ingress", "tcp", tc.tcp...), fixtures.ConfigMap("ingress", "udp", tc.udp...))
			cfg := Build(newTestStore(t, all...), l4Options())
			check.Equal(t, "L4", cfg.L4, tc.want)
			var ps []config.Problem
			for _, p := range cfg.Problems {
				if p.Kind == config.ProblemKindConfigMap {
					ps = append(ps, p)
				}
			}
			checkProblems(t, ps, tc.problems)
		})
	}
}

func TestBuildL4ChecksumFollowsEndpoints(t *testing.T) {
	cm := fixtures.ConfigMap("ingress", "tcp", "9000", "data/db:5432")
	a := Build(newTestStore(t, append(l4Objects(), cm)...), l4Options())
	moved := append(l4Objects(), cm, slice("data", "db-1", "db", "pg", 5432, ready("10.0.0.9")))
	b := Build(newTestStore(t, moved...), l4Options())
	none := Build(newTestStore(t, l4Objects()...), l4Options())
	if a.Checksum == b.Checksum || a.Checksum == none.Checksum {
		t.Errorf("checksums %s %s %s: an endpoint change and a removed service must change it", a.Checksum, b.Checksum, none.Checksum)
	}
	if got := a.ComputeChecksum(); got != a.Checksum {
		t.Errorf("checksum from parts %s, whole %s", a.Checksum, got)
	}
}

func TestBuildPassthrough(t *testing.T) {
	web := one(service("default", "argocd", svcPort("https", 443)), slice("default", "argocd-1", "argocd", "https", 8443, ready("10.0.2.1")),
		service("default", "web"), slice("default", "web-1", "web", "http", 8080, ready("10.0.3.1")))
	pt := nginx("ssl-passthrough", "true")
	tests := map[string]struct {
		objs     []runtime.Object
		disabled bool
		want     []config.PassthroughHost
		problems []string
	}{
		"root path": {objs: one(newIngress("default", "argo", pt, rule("argo.example.com", prefix("/", "argocd", 443)))),
			want: []config.PassthroughHost{{Hostname: "argo.example.com", Ingress: "default/argo", Backend: "default-argocd-443", Endpoints: []config.Endpoint{ep("10.0.2.1", 8443)}}}},
		"flag off": {disabled: true, objs: one(newIngress("default", "argo", pt, rule("argo.example.com", prefix("/", "argocd", 443)))),
			problems: []string{"needs the syncer's --enable-ssl-passthrough"}},
		"no root path": {objs: one(newIngress("default", "argo", pt, rule("argo.example.com", prefix("/api", "argocd", 443)))),
			problems: []string{"host argo.example.com has no Prefix / path"}},
		"root path of another Ingress of the host": {objs: one(
			newIngress("default", "web", created(1), rule("argo.example.com", prefix("/", "web", 80))),
			newIngress("default", "argo", created(2), pt, rule("argo.example.com", prefix("/x", "argocd", 443)))),
			want: []config.PassthroughHost{{Hostname: "argo.example.com", Ingress: "default/web", Backend: "default-web-80", Endpoints: []config.Endpoint{ep("10.0.3.1", 8080)}}}},
		"wildcard and no host": {objs: one(newIngress("default", "argo", pt, rule("*.example.com", prefix("/", "argocd", 443)), rule("", prefix("/", "argocd", 443)))),
			problems: []string{"a rule without host", "wildcard host *.example.com"}},
		"false": {objs: one(newIngress("default", "argo", nginx("ssl-passthrough", "false"), rule("argo.example.com", prefix("/", "argocd", 443))))},
		"not a bool": {objs: one(newIngress("default", "argo", nginx("ssl-passthrough", "yes please"), rule("argo.example.com", prefix("/", "argocd", 443)))),
			problems: []string{"ssl-passthrough"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := testOptions()
			o.EnableSSLPassthrough = !tc.disabled
			cfg := Build(newTestStore(t, append(web, tc.objs...)...), o)
			check.Equal(t, "Passthrough", cfg.Passthrough, tc.want)
			checkProblems(t, cfg.Problems, tc.problems)
			for _, s := range cfg.Servers {
				if s.Hostname == "argo.example.com" && len(s.Locations) == 0 {
					t.Errorf("passthrough host has no HTTP locations: port 80 must still route")
				}
			}
		})
	}
}

func FuzzL4Value(f *testing.F) {
	for _, v := range []string{"data/db:5432", "data/db:pg:PROXY:PROXY", "a/b:1::proxy", "x", "::::", "a/b:99999", "a/b:c:d"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, proto := range []config.L4Protocol{config.L4TCP, config.L4UDP} {
			s, err := parseL4Value(proto, v)
			if err != nil {
				continue
			}
			if !intent.IsDNSLabel(s.Namespace) || !intent.IsDNSLabel(s.Service) || !validServicePort(s.ServicePort) {
				t.Fatalf("accepted %q as %+v", v, s)
			}
			if proto == config.L4UDP && (s.DecodeProxy || s.EncodeProxy) || strings.ContainsAny(s.ServicePort, ";{}\"' \n$") {
				t.Fatalf("accepted %q as %+v", v, s)
			}
		}
	})
}

func TestWithoutListeners(t *testing.T) {
	cm := fixtures.ConfigMap("ingress", "tcp", "9000", "data/db:5432", "9001", "data/db:5432")
	cfg := Build(newTestStore(t, append(l4Objects(), cm)...), l4Options())
	same := WithoutListeners(cfg, l4Options(), func(config.L4Service) error { return nil })
	if same != cfg {
		t.Errorf("nothing refused: want cfg itself")
	}
	out := WithoutListeners(cfg, l4Options(), func(s config.L4Service) error {
		if s.Port == 9000 {
			return errors.New("permission denied")
		}
		return nil
	})
	if len(cfg.L4) != 2 || len(out.L4) != 1 || out.L4[0].Port != 9001 {
		t.Fatalf("L4 %+v from %+v", out.L4, cfg.L4)
	}
	checkProblems(t, out.Problems, []string{`ConfigMap ingress/tcp: TCP port "9000": nginx cannot listen on it: permission denied; entry left out`})
	want := Build(newTestStore(t, append(l4Objects(), fixtures.ConfigMap("ingress", "tcp", "9001", "data/db:5432"))...), l4Options())
	if out.Checksum != want.Checksum || out.Checksum == cfg.Checksum {
		t.Errorf("checksum %s, want %s (that of a build without the entry)", out.Checksum, want.Checksum)
	}
}

// TestWithoutGatewayListeners: a Gateway listener port nginx cannot bind
// is left out with a Problem on its Gateway, the others kept.
func TestWithoutGatewayListeners(t *testing.T) {
	cfg := &config.Configuration{Listeners: []config.Listener{{Port: 10080, Gateway: "shop/one"}, {Port: 10081, TLS: true, Gateway: "shop/two"}}}
	cfg.Checksum = cfg.ComputeChecksum()
	out := WithoutListeners(cfg, l4Options(), func(s config.L4Service) error {
		if s.Protocol == config.L4TCP && s.Port == 10080 {
			return errors.New("address already in use")
		}
		return nil
	})
	if !slices.Equal(out.Listeners, cfg.Listeners[1:]) || len(cfg.Listeners) != 2 {
		t.Fatalf("listeners %+v from %+v", out.Listeners, cfg.Listeners)
	}
	checkProblems(t, out.Problems, []string{"Gateway shop/one: listener port of the fleet 10080: nginx cannot listen on it: address already in use; its listeners on it are not served"})
	if out.Checksum == cfg.Checksum {
		t.Error("the checksum did not change")
	}
}
