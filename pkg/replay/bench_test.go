package replay

import (
	"context"
	"fmt"
	"github.com/ingress-sync/ingress-sync/test/testkit/cputime"
	"math/rand/v2"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// churn is the event mix of the replay benchmark, a cluster of apps each
// with an Ingress (two paths), a Service and an EndpointSlice of 10
// endpoints, one app in ten with a TLS Secret. After creating them it
// emits, in random order:
//
//   - EndpointSlice updates that move one endpoint (a pod replaced), the
//     bulk of a real cluster's events;
//   - Ingress updates that add or remove a path (route table pushes), ingressEvery;
//   - Service, Secret and ConfigMap updates nothing reads (no change).
type churn struct {
	apps         int
	ingressEvery int
	rnd          *rand.Rand
	rv           int
	endpoints    [][]string // current addresses per app
	paths        []bool     // whether an app's Ingress has its extra path
	secret       *corev1.Secret
}

func (c *churn) ns(app int) string   { return "ns-" + strconv.Itoa(app%50) }
func (c *churn) name(app int) string { return "app-" + strconv.Itoa(app) }

func (c *churn) ingress(app int) runtime.Object {
	name := c.name(app)
	host := name + ".example.com"
	paths := []fixtures.IngressOption{fixtures.Rule(host, fixtures.Prefix("/", name, 80), fixtures.Prefix("/api", name, 80))}
	if c.paths[app] {
		paths = append(paths, fixtures.Rule(host, fixtures.Prefix("/v2", name, 80)))
	}
	if app%10 == 0 {
		paths = append(paths, fixtures.TLS(name+"-tls", host))
	}
	return fixtures.Ingress(c.ns(app), name, paths...)
}

func (c *churn) slice(app int) runtime.Object {
	return fixtures.EndpointSlice(c.ns(app), c.name(app)+"-abcde", c.name(app), 8080, c.endpoints[app]...)
}

// initial returns the objects of every app.
func (c *churn) initial() []runtime.Object {
	var out []runtime.Object
	for app := range c.apps {
		for j := range 10 {
			c.endpoints[app] = append(c.endpoints[app], fmt.Sprintf("10.%d.%d.%d", app>>8, app&255, j))
		}
		out = append(out, fixtures.Service(c.ns(app), c.name(app), 80), c.slice(app))
		if app%10 == 0 {
			s := c.secret.DeepCopy()
			s.Namespace, s.Name = c.ns(app), c.name(app)+"-tls"
			out = append(out, s)
		}
		out = append(out, c.ingress(app))
	}
	return out
}

// next returns one churn event's object.
func (c *churn) next(i int) runtime.Object {
	app := c.rnd.IntN(c.apps)
	switch {
	case i%c.ingressEvery == 0:
		c.paths[app] = !c.paths[app]
		return c.ingress(app)
	case i%50 == 1:
		return fixtures.Service(c.ns(app), c.name(app)+"-unused", 80)
	case i%50 == 2:
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns(app), Name: "settings"}, Data: map[string]string{"n": strconv.Itoa(i)}}
	}
	eps := c.endpoints[app]
	eps[c.rnd.IntN(len(eps))] = fmt.Sprintf("10.%d.%d.%d", 100+c.rnd.IntN(100), c.rnd.IntN(256), c.rnd.IntN(256))
	return c.slice(app)
}

// publishAsync publishes the events of objs (creates, then updates) with
// asynchronous publishes and waits for every ack.
func publishAsync(b *testing.B, js jetstream.JetStream, total int, c *churn) {
	b.Helper()
	seen := map[string]bool{}
	objs := c.initial()
	for i := 0; len(objs) < total; i++ {
		objs = append(objs, c.next(i))
	}
	for i, obj := range objs {
		m := obj.(metav1.Object)
		m.SetResourceVersion(strconv.Itoa(i + 1))
		ev := events.Event{Op: events.OpUpdate, Kind: events.KindOf(obj), Namespace: m.GetNamespace(), Name: m.GetName(),
			UID: string(m.GetUID()), ResourceVersion: m.GetResourceVersion(), ObservedAt: fixtures.Epoch, Object: obj}
		if key := string(ev.Kind) + ev.Key(); !seen[key] {
			ev.Op, seen[key] = events.OpCreate, true
		}
		msg := nats.NewMsg(events.Subject(testPrefix, ev.Kind, ev.Namespace, ev.Name))
		msg.Header, msg.Data = events.Headers(ev), mustEncode(b, ev)
		if _, err := js.PublishMsgAsync(msg, jetstream.WithStallWait(time.Minute)); err != nil {
			b.Fatalf("publish %d: %v", i, err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(5 * time.Minute):
		b.Fatal("publishing did not complete")
	}
}

// BenchmarkReplay100k replays a timeline over 100k events stored in a real
// embedded nats-server: reading, decoding, applying, rebuilding after every
// event and describing each change.
//
//	go test -run XXX -bench Replay100k -benchtime 3x ./pkg/replay/
//
// cpu-s/op is the process CPU time (all threads: GC and the embedded
// server included) per replay; on a shared machine it varies much less
// than the wall time of ns/op.
func BenchmarkReplay100k(b *testing.B) {
	const total = 100_000
	for _, tc := range []struct {
		name               string
		apps, ingressEvery int
	}{
		{"apps=1000/ingress-every=500", 1000, 500},
		{"apps=100/ingress-every=50", 100, 50},
	} {
		b.Run(tc.name, func(b *testing.B) {
			r := newRecorder(b, -1)
			c := &churn{apps: tc.apps, ingressEvery: tc.ingressEvery, rnd: rand.New(rand.NewPCG(1, 2)),
				endpoints: make([][]string, tc.apps), paths: make([]bool, tc.apps), secret: tlsSecret(b, "x", "x")}
			publishAsync(b, r.js, total, c)
			rp := r.replayer(testModelOptions())
			defer debug.SetGCPercent(debug.SetGCPercent(GCPercent)) // as `syncer replay` runs
			var tl *Timeline
			b.ResetTimer()
			cpu := cputime.Process()
			for b.Loop() {
				var err error
				if tl, err = rp.Timeline(context.Background(), Point{}, Point{}, Filter{}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			cpu = cputime.Process() - cpu
			if tl.Events != total {
				b.Fatalf("replayed %d events (seq %d to %d), want %d", tl.Events, tl.FirstSequence, tl.LastSequence, total)
			}
			b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(tl.Reloads), "reloads")
			b.ReportMetric(float64(tl.Changes), "changes")
		})
	}
}
