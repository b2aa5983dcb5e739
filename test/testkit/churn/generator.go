package churn

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// servicePort is the port of every generated Service.
const servicePort = 80

// recentlyRemoved is how many removed addresses of a Service are kept out
// of its next additions, so that a probe never takes an old endpoint that
// nginx still holds for the new one.
const recentlyRemoved = 8

// Change is one write of the churn (or of the setup).
type Change struct {
	Seq    int           // position in the churn, from 0 (setup: -1)
	At     time.Duration // due offset from the start of the churn
	Class  Class
	Op     events.Op
	Object runtime.Object // the whole new state; the last state for a delete
	// For endpoint changes: the base Ingress (app) whose Service changed,
	// the host routed to it, whether that host has TLS (and so redirects
	// plain HTTP to HTTPS), and the address added ("" for a scale-down).
	// For the create of an Ingress: its host (App is -1).
	App   int
	Host  string
	TLS   bool
	Added string
}

// Key identifies the changed object.
func (c Change) Key() ObjectKey {
	m := c.Object.(metav1.Object)
	return ObjectKey{Kind: events.KindOf(c.Object), Namespace: m.GetNamespace(), Name: m.GetName()}
}

// ObjectKey identifies an object across kinds.
type ObjectKey struct {
	Kind            events.Kind
	Namespace, Name string
}

func (k ObjectKey) String() string { return string(k.Kind) + " " + k.Namespace + "/" + k.Name }

// app is a base Ingress with its Service, EndpointSlice and maybe Secret.
type app struct {
	ns, name, host string
	eps            []string
	recent         []string // last removed addresses, oldest first
	tls            bool
	pair           int // certificate of the Secret, index into the pool
}

// extra is an Ingress created by the churn.
type extra struct {
	ns, name, host, service string
	api                     bool // has the /api path
}

// Generator produces the setup and the churn of a Spec, the same for the
// same Spec (seed included) and certificate pool. It is not safe for
// concurrent use.
type Generator struct {
	spec      Spec
	pairs     []*certs.Pair
	rnd       *rand.Rand
	apps      []app
	tlsApps   []int
	extras    []extra
	nextExtra int
	sched     *schedule
	seq       int
}

// NewGenerator validates spec and lays out the initial cluster. pairs is
// the pool of TLS certificates (for hosts under spec.Domain) that Secrets
// take and rotate through: at least one with TLS, two with rotation.
func NewGenerator(spec Spec, pairs []*certs.Pair) (*Generator, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if (spec.TLSEvery > 0 && len(pairs) < 1) || (spec.SecretRate > 0 && len(pairs) < 2) {
		return nil, fmt.Errorf("%w: %d certificates for TLS every %d and %g rotations/s", ErrInvalidSpec, len(pairs), spec.TLSEvery, spec.SecretRate)
	}
	g := &Generator{spec: spec, pairs: pairs, rnd: rand.New(rand.NewPCG(spec.Seed, 0x63687572)), sched: newSchedule(spec)}
	g.apps = make([]app, spec.Ingresses)
	for i := range g.apps {
		a := &g.apps[i]
		a.ns = fmt.Sprintf("%s-%d", spec.NamespacePrefix, i%spec.Namespaces)
		a.name = fmt.Sprintf("app-%d", i)
		a.host = a.name + "." + spec.Domain
		n := spec.MinEndpoints + g.rnd.IntN(spec.MaxEndpoints-spec.MinEndpoints+1)
		for range n {
			a.eps = append(a.eps, g.freshAddress(a))
		}
		if spec.TLSEvery > 0 && i%spec.TLSEvery == 0 {
			a.tls, a.pair = true, g.rnd.IntN(len(pairs))
			g.tlsApps = append(g.tlsApps, i)
		}
	}
	return g, nil
}

// Namespaces lists the namespaces of the cluster.
func (g *Generator) Namespaces() []string {
	out := make([]string, 0, g.spec.Namespaces)
	for i := range min(g.spec.Namespaces, g.spec.Ingresses) {
		out = append(out, g.apps[i].ns)
	}
	return out
}

// PlainHosts are the hosts of the first and the last base Ingress
// without TLS (none when all have TLS): the hosts checked through nginx
// before the churn starts.
func (g *Generator) PlainHosts() []string {
	var out []string
	for i := range g.apps {
		if !g.apps[i].tls {
			out = append(out, g.apps[i].host)
			break
		}
	}
	for i := len(g.apps) - 1; i >= 0 && len(out) == 1; i-- {
		if !g.apps[i].tls {
			out = append(out, g.apps[i].host)
		}
	}
	return out
}

// Setup returns the initial objects as creates: the IngressClass, then
// Secrets, Services, EndpointSlices and Ingresses, so that an Ingress
// arrives after what it references.
func (g *Generator) Setup(controllerClass string) []Change {
	out := []Change{setupChange(strip(fixtures.IngressClass(g.spec.IngressClass, controllerClass, false)))}
	if g.httpRoutes() {
		out = append(out, setupChange(g.gatewayClass()), setupChange(g.gateway()))
	}
	for _, i := range g.tlsApps {
		out = append(out, setupChange(g.secret(&g.apps[i])))
	}
	for i := range g.apps {
		out = append(out, setupChange(g.service(&g.apps[i])))
	}
	for i := range g.apps {
		out = append(out, setupChange(g.slice(&g.apps[i])))
	}
	for i := range g.apps {
		out = append(out, setupChange(g.route(&g.apps[i])))
	}
	return out
}

func setupChange(obj runtime.Object) Change {
	return Change{Seq: -1, Class: ClassSetup, Op: events.OpCreate, Object: obj, App: -1}
}

// Next returns the next change of the churn, or false when a bound is
// reached.
func (g *Generator) Next() (Change, bool) {
	class, at, ok := g.sched.pop()
	if !ok {
		return Change{}, false
	}
	var ch Change
	switch class {
	case ClassEndpoints:
		ch = g.endpointChange()
	case ClassIngress:
		ch = g.ingressChange()
	case ClassSecret:
		ch = g.secretChange()
	}
	ch.Seq, ch.At, ch.Class = g.seq, at, class
	g.seq++
	return ch, true
}

// endpointChange scales a random Service up or down, or replaces one of its
// endpoints (a new pod IP), within the Spec's bounds.
func (g *Generator) endpointChange() Change {
	i := g.rnd.IntN(len(g.apps))
	a := &g.apps[i]
	var ops []int // 0 up, 1 down, 2 replace
	if len(a.eps) < g.spec.MaxEndpoints {
		ops = append(ops, 0)
	}
	if len(a.eps) > g.spec.MinEndpoints {
		ops = append(ops, 1)
	}
	ops = append(ops, 2)
	added := ""
	switch ops[g.rnd.IntN(len(ops))] {
	case 0:
		added = g.freshAddress(a)
		a.eps = append(a.eps, added)
	case 1:
		j := g.rnd.IntN(len(a.eps))
		a.forget(a.eps[j])
		a.eps = slices.Delete(a.eps, j, j+1)
	case 2:
		j := g.rnd.IntN(len(a.eps))
		added = g.freshAddress(a)
		a.forget(a.eps[j])
		a.eps[j] = added
	}
	return Change{Op: events.OpUpdate, Object: g.slice(a), App: i, Host: a.host, TLS: a.tls, Added: added}
}

func (a *app) forget(addr string) {
	a.recent = append(a.recent, addr)
	if len(a.recent) > recentlyRemoved {
		a.recent = a.recent[1:]
	}
}

// freshAddress picks an address of the pool that a does not use and has
// not used lately (or, if the pool is too small for that, one it does not
// use).
func (g *Generator) freshAddress(a *app) string {
	pool := g.spec.Addresses
	for range 64 {
		c := pool[g.rnd.IntN(len(pool))]
		if !slices.Contains(a.eps, c) && !slices.Contains(a.recent, c) {
			return c
		}
	}
	start := g.rnd.IntN(len(pool))
	for k := range pool {
		if c := pool[(start+k)%len(pool)]; !slices.Contains(a.eps, c) {
			return c
		}
	}
	panic("churn: address pool smaller than the endpoints of a Service") // Validate prevents it
}

// ingressChange creates, updates (toggles a path) or deletes an extra
// Ingress, keeping at most MaxExtraIngresses of them (or only creates,
// with IngressCreatesOnly).
func (g *Generator) ingressChange() Change {
	n := len(g.extras)
	op := events.OpCreate
	switch {
	case n == 0 || g.spec.IngressCreatesOnly:
	case n >= g.spec.MaxExtraIngresses:
		op = []events.Op{events.OpUpdate, events.OpDelete}[g.rnd.IntN(2)]
	default:
		op = []events.Op{events.OpCreate, events.OpUpdate, events.OpDelete}[g.rnd.IntN(3)]
	}
	if op == events.OpCreate {
		a := &g.apps[g.rnd.IntN(len(g.apps))]
		name := fmt.Sprintf("extra-%d", g.nextExtra)
		g.nextExtra++
		g.extras = append(g.extras, extra{ns: a.ns, name: name, host: name + "." + g.spec.Domain, service: a.name})
		return Change{Op: op, Object: g.extraRoute(&g.extras[n]), App: -1, Host: g.extras[n].host}
	}
	j := g.rnd.IntN(n)
	e := &g.extras[j]
	if op == events.OpUpdate {
		e.api = !e.api
		return Change{Op: op, Object: g.extraRoute(e), App: -1}
	}
	obj := g.extraRoute(e)
	g.extras = slices.Delete(g.extras, j, j+1)
	return Change{Op: op, Object: obj, App: -1}
}

// secretChange gives a random TLS Secret another certificate of the pool.
func (g *Generator) secretChange() Change {
	a := &g.apps[g.tlsApps[g.rnd.IntN(len(g.tlsApps))]]
	a.pair = (a.pair + 1 + g.rnd.IntN(len(g.pairs)-1)) % len(g.pairs)
	return Change{Op: events.OpUpdate, Object: g.secret(a), App: -1}
}

// The objects, fresh for every change (targets and stores keep them), with
// neither UID nor resourceVersion: the API or the stream target sets them.

func (g *Generator) service(a *app) *corev1.Service {
	svc := fixtures.Service(a.ns, a.name, servicePort)
	svc.Spec.Selector = nil // its EndpointSlices are ours, not a controller's
	return strip(svc)
}

func (g *Generator) slice(a *app) *discoveryv1.EndpointSlice {
	return strip(fixtures.EndpointSlice(a.ns, a.name+"-1", a.name, g.spec.Port, a.eps...))
}

func (g *Generator) secret(a *app) *corev1.Secret {
	return strip(fixtures.TLSSecret(a.ns, a.name+"-tls", g.pairs[a.pair]))
}

// route is the route object of base app a: its Ingress or HTTPRoute.
func (g *Generator) route(a *app) runtime.Object {
	if g.httpRoutes() {
		return g.httpRoute(a.ns, a.name, a.host, a.name, false)
	}
	return g.ingress(a)
}

// extraRoute is the route object of extra e.
func (g *Generator) extraRoute(e *extra) runtime.Object {
	if g.httpRoutes() {
		return g.httpRoute(e.ns, e.name, e.host, e.service, e.api)
	}
	return g.extraIngress(e)
}

func (g *Generator) ingress(a *app) *networkingv1.Ingress {
	opts := []fixtures.IngressOption{fixtures.Class(g.spec.IngressClass), fixtures.Rule(a.host, fixtures.Prefix("/", a.name, servicePort))}
	if a.tls {
		opts = append(opts, fixtures.TLS(a.name+"-tls", a.host))
	}
	return strip(fixtures.Ingress(a.ns, a.name, opts...))
}

func (g *Generator) extraIngress(e *extra) *networkingv1.Ingress {
	paths := []networkingv1.HTTPIngressPath{fixtures.Prefix("/", e.service, servicePort)}
	if e.api {
		paths = append(paths, fixtures.Prefix("/api", e.service, servicePort))
	}
	return strip(fixtures.Ingress(e.ns, e.name, fixtures.Class(g.spec.IngressClass), fixtures.Rule(e.host, paths...)))
}

func strip[T metav1.Object](obj T) T {
	obj.SetUID("")
	obj.SetResourceVersion("")
	return obj
}
