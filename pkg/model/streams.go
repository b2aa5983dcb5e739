package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// TCP and UDP services (ingress-nginx's --tcp-services-configmap and
// --udp-services-configmap) and SSL passthrough (--enable-ssl-passthrough
// with the ssl-passthrough annotation).
//
// A services ConfigMap maps an external port to
// "namespace/service:port[:PROXY[:PROXY]]": port is the Service port's
// number or name, the first PROXY makes the listener expect a PROXY
// protocol header, the second sends one to the backend (TCP only). Every
// entry is validated on its own: a bad one is left out with a Problem on
// the ConfigMap and never blocks the others.

// maxL4Value bounds a services ConfigMap value.
const maxL4Value = 512

// l4Source is a services ConfigMap ("namespace/name", or "") and the
// protocol of its entries.
type l4Source struct {
	ref   string
	proto config.L4Protocol
}

// l4Sources are the TCP and UDP services ConfigMaps of opts.
func l4Sources(opts Options) [2]l4Source {
	return [2]l4Source{{opts.TCPServicesConfigMap, config.L4TCP}, {opts.UDPServicesConfigMap, config.L4UDP}}
}

// l4ConfigMap is the services ConfigMap of proto in opts.
func l4ConfigMap(opts Options, proto config.L4Protocol) string {
	for _, src := range l4Sources(opts) {
		if src.proto == proto {
			return src.ref
		}
	}
	return ""
}

// l4EntryProblem is the Problem of an entry (port, as written) of the
// services ConfigMap ref that is left out because of err.
func l4EntryProblem(ref string, proto config.L4Protocol, port string, err error) config.Problem {
	key, _ := intent.ParseKey(ref)
	return config.Problem{Kind: config.ProblemKindConfigMap, Namespace: key.Namespace, Name: key.Name,
		Reason: fmt.Sprintf("%s port %s: %v; entry left out", proto, intent.Quote(port), err)}
}

// buildL4 builds Configuration.L4 from the two services ConfigMaps.
func (b *builder) buildL4() []config.L4Service {
	var out []config.L4Service
	for _, src := range l4Sources(b.opts) {
		out = append(out, b.l4From(src.ref, src.proto)...)
	}
	slices.SortFunc(out, func(x, y config.L4Service) int {
		return cmp.Or(cmp.Compare(x.Protocol, y.Protocol), cmp.Compare(x.Port, y.Port))
	})
	return out
}

// l4From builds the services of one ConfigMap, sorted by port.
func (b *builder) l4From(ref string, proto config.L4Protocol) []config.L4Service {
	if ref == "" {
		return nil
	}
	key, err := intent.ParseKey(ref)
	if err != nil {
		return nil // Options.Validate reports it
	}
	cm := b.s.ConfigMap(key.Namespace, key.Name)
	if cm == nil {
		return nil
	}
	ports := make([]string, 0, len(cm.Data))
	for k := range cm.Data {
		ports = append(ports, k)
	}
	slices.Sort(ports)
	var out []config.L4Service
	for _, port := range ports {
		svc, err := b.l4Service(proto, port, cm.Data[port])
		if err != nil {
			b.problems = append(b.problems, l4EntryProblem(ref, proto, port, err))
			continue
		}
		out = append(out, svc)
	}
	return out
}

// l4Service parses and resolves one entry.
func (b *builder) l4Service(proto config.L4Protocol, port, value string) (config.L4Service, error) {
	p, err := parseL4Port(port)
	if err != nil {
		return config.L4Service{}, err
	}
	if slices.Contains(b.opts.ReservedPorts, p) {
		return config.L4Service{}, fmt.Errorf("is reserved for the controller's own listeners")
	}
	svc, err := parseL4Value(proto, value)
	if err != nil {
		return config.L4Service{}, fmt.Errorf("value %s: %w", intent.Quote(value), err)
	}
	svc.Port = p
	if err := b.resolveL4(&svc); err != nil {
		return config.L4Service{}, err
	}
	return svc, nil
}

// parseL4Port parses an external port: 1 to 65535, digits only, no
// leading zero.
func parseL4Port(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 || s[0] == '0' || s[0] == '+' {
		return 0, fmt.Errorf("is not a port number from 1 to 65535")
	}
	return n, nil
}

// parseL4Value parses "namespace/service:port[:PROXY[:PROXY]]". An empty
// option field is no option (ingress-nginx's "ns/svc:80::PROXY" encodes
// only); anything but PROXY (any case) is refused. PROXY on a UDP entry is
// refused too: the PROXY protocol is TCP's (ingress-nginx ignores it).
func parseL4Value(proto config.L4Protocol, v string) (config.L4Service, error) {
	if len(v) > maxL4Value {
		return config.L4Service{}, fmt.Errorf("longer than %d characters", maxL4Value)
	}
	parts := strings.Split(strings.TrimSpace(v), ":")
	if len(parts) < 2 || len(parts) > 4 {
		return config.L4Service{}, fmt.Errorf("must be namespace/service:port with up to two PROXY options")
	}
	key, err := intent.ParseKey(parts[0])
	if err != nil || !intent.IsDNSLabel(key.Name) {
		return config.L4Service{}, fmt.Errorf("%s is not namespace/service", intent.Quote(parts[0]))
	}
	if !validServicePort(parts[1]) {
		return config.L4Service{}, fmt.Errorf("service port %s is not a number from 1 to 65535 or a port name", intent.Quote(parts[1]))
	}
	svc := config.L4Service{Protocol: proto, Namespace: key.Namespace, Service: key.Name, ServicePort: parts[1]}
	for i, opt := range parts[2:] {
		switch {
		case opt == "":
		case !strings.EqualFold(opt, "PROXY"):
			return config.L4Service{}, fmt.Errorf("option %s is not PROXY", intent.Quote(opt))
		case proto == config.L4UDP:
			return config.L4Service{}, fmt.Errorf("PROXY is a TCP option (the PROXY protocol has no UDP form here)")
		case i == 0:
			svc.DecodeProxy = true
		default:
			svc.EncodeProxy = true
		}
	}
	return svc, nil
}

// validServicePort accepts a port number or an IANA service name.
func validServicePort(s string) bool {
	if s != "" && s[0] >= '0' && s[0] <= '9' {
		_, err := parseL4Port(s)
		return err == nil
	}
	return len(s) <= 15 && intent.IsDNSLabel(s)
}

// resolveL4 finds the Service port of svc with the entry's protocol and
// its ready endpoints. A Service without ready endpoints keeps its
// listener (connections are closed until one is ready), unlike
// ingress-nginx, which removes the listener: a reload per scale to zero.
func (b *builder) resolveL4(svc *config.L4Service) error {
	key := intent.Key{Namespace: svc.Namespace, Name: svc.Service}
	obj := b.s.services[key]
	switch {
	case obj == nil:
		return fmt.Errorf("service %s not found", key)
	case obj.typ == corev1.ServiceTypeExternalName:
		return fmt.Errorf("service %s %w", key, errExternalName)
	}
	sp := l4ServicePort(obj, svc.ServicePort, corev1.Protocol(svc.Protocol))
	if sp == nil {
		return fmt.Errorf("service %s has no %s port %s", key, svc.Protocol, svc.ServicePort)
	}
	svc.Endpoints, _ = b.endpoints(key, sp.name)
	return nil
}

// l4ServicePort returns the port of svc named or numbered ref whose
// protocol is proto (a port without protocol is TCP).
func l4ServicePort(svc *serviceEntry, ref string, proto corev1.Protocol) *servicePortEntry {
	num, _ := strconv.Atoi(ref)
	for i := range svc.ports {
		p := &svc.ports[i]
		if cmp.Or(p.protocol, corev1.ProtocolTCP) != proto {
			continue
		}
		if p.name == ref || num > 0 && int(p.port) == num {
			return p
		}
	}
	return nil
}

// finishPassthrough builds Configuration.Passthrough: for every host of an
// Ingress with ssl-passthrough, the endpoints of the backend of the host's
// Prefix "/" path, as ingress-nginx (which needs that path too). Without
// --enable-ssl-passthrough the annotation is left out with a Problem.
func (b *builder) finishPassthrough(cfg *config.Configuration) {
	hosts := b.passthroughHosts()
	if len(hosts) == 0 {
		return
	}
	for _, h := range hosts {
		if p, ok := b.passthroughHost(cfg, h); ok {
			cfg.Passthrough = append(cfg.Passthrough, p)
		}
	}
	slices.SortFunc(cfg.Passthrough, func(x, y config.PassthroughHost) int { return cmp.Compare(x.Hostname, y.Hostname) })
}

type passthroughClaim struct {
	host string
	e    *intent.Entry
}

// passthroughHosts returns the hosts of the served Ingresses with
// ssl-passthrough, each with its oldest such Ingress.
func (b *builder) passthroughHosts() []passthroughClaim {
	var out []passthroughClaim
	seen := map[string]bool{}
	for _, e := range b.entries {
		if !e.Settings.SSLPassthrough {
			continue
		}
		if !b.opts.EnableSSLPassthrough {
			b.entryProblem(e, "ssl-passthrough needs the syncer's --enable-ssl-passthrough; annotation ignored")
			continue
		}
		for _, r := range e.Rules {
			switch {
			case r.Raw == "":
				b.entryProblem(e, "ssl-passthrough: a rule without host cannot be matched by SNI; rule ignored for passthrough")
			case strings.HasPrefix(r.Raw, "*."):
				b.entryProblem(e, "ssl-passthrough: wildcard host %s is not matched by SNI (exact names only); rule ignored for passthrough", r.Raw)
			case !seen[r.Raw]:
				seen[r.Raw] = true
				out = append(out, passthroughClaim{r.Raw, e})
			}
		}
	}
	return out
}

// passthroughHost resolves one claimed host against the built servers.
func (b *builder) passthroughHost(cfg *config.Configuration, c passthroughClaim) (config.PassthroughHost, bool) {
	// Not a binary search: aliases and www redirects follow the sorted
	// servers; passthrough hosts are few.
	i := slices.IndexFunc(cfg.Servers, func(s config.Server) bool { return s.Hostname == c.host })
	if i < 0 {
		return config.PassthroughHost{}, false // the rule was left out with its own Problem
	}
	for _, l := range cfg.Servers[i].Locations {
		if l.Path != "/" || l.PathType != config.PathPrefix || l.Ingress == "" {
			continue
		}
		be, _, ok := cfg.Backends.Find(l.Backend)
		if !ok {
			break
		}
		return config.PassthroughHost{Hostname: c.host, Ingress: l.Ingress, Backend: l.Backend, Endpoints: be.Endpoints}, true
	}
	b.entryProblem(c.e, "ssl-passthrough: host %s has no Prefix / path with a Service backend; passthrough ignored", c.host)
	return config.PassthroughHost{}, false
}

// WithoutListeners returns cfg without the TCP and UDP services and the
// Gateway listener ports (checked as TCP services) that check refuses (the
// syncer's test that nginx can bind their port: a listener nginx cannot
// open fails the whole reload, and so every later change), each with a
// Problem on its ConfigMap or Gateway, and the checksum of what is left.
// cfg itself is returned when check refuses none; it is never modified.
func WithoutListeners(cfg *config.Configuration, opts Options, check func(config.L4Service) error) *config.Configuration {
	var problems []config.Problem
	l4 := keepChecked(cfg.L4, func(svc config.L4Service) error { return check(svc) }, func(svc config.L4Service, err error) {
		problems = append(problems, l4EntryProblem(l4ConfigMap(opts, svc.Protocol), svc.Protocol, strconv.Itoa(svc.Port),
			fmt.Errorf("nginx cannot listen on it: %w", err)))
	})
	gw := keepChecked(cfg.Listeners, func(l config.Listener) error { return check(config.L4Service{Protocol: config.L4TCP, Port: l.Port}) },
		func(l config.Listener, err error) {
			k, _ := intent.ParseKey(l.Gateway)
			problems = append(problems, config.Problem{Kind: string(events.KindGateway), Namespace: k.Namespace, Name: k.Name,
				Reason: fmt.Sprintf("listener port of the fleet %d: nginx cannot listen on it: %v; its listeners on it are not served", l.Port, err)})
		})
	if problems == nil {
		return cfg
	}
	out := *cfg
	out.L4, out.Listeners = l4, gw
	out.Problems = sortProblems(append(slices.Clone(cfg.Problems), problems...))
	out.Checksum = config.ChecksumTrustingParts(&out)
	return &out
}

// keepChecked returns the elements of list that check accepts (list itself
// when it accepts them all), calling refused for the others.
func keepChecked[T any](list []T, check func(T) error, refused func(T, error)) []T {
	var kept []T
	cut := false
	for i, x := range list {
		err := check(x)
		if err == nil {
			if cut {
				kept = append(kept, x)
			}
			continue
		}
		if !cut {
			kept, cut = append(make([]T, 0, len(list)), list[:i]...), true
		}
		refused(x, err)
	}
	if !cut {
		return list
	}
	return kept
}
