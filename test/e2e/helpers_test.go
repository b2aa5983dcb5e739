package e2e

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
	"github.com/ingress-sync/ingress-sync/test/testkit/natstest"
	"github.com/ingress-sync/ingress-sync/test/testkit/netns"
	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
	"github.com/ingress-sync/ingress-sync/test/testkit/world"
)

const (
	statusAddress = "198.18.0.250"
	backendPort   = 8080
	waitTimeout   = 30 * time.Second
)

// nextAddr hands out backend addresses in the namespace's test range.
var nextAddr atomic.Int32

var classOnce sync.Once

// setup returns a fresh namespace, after making sure our IngressClass exists.
func setup(t *testing.T) string {
	t.Helper()
	classOnce.Do(func() {
		ic := fixtures.IngressClass(world.IngressClass, world.ControllerClass, false)
		ic.UID, ic.ResourceVersion = "", ""
		_, err := w.Kube.NetworkingV1().IngressClasses().Create(t.Context(), ic, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create IngressClass: %v", err)
		}
	})
	return testenv.NewNamespace(t, w.Kube)
}

// backend starts an echo server on a fresh test-range address.
func backend(t *testing.T, name string) *echo.Server {
	t.Helper()
	i := int(nextAddr.Add(1))
	s, err := echo.Start(name, net.JoinHostPort(netns.Addr(i), fmt.Sprint(backendPort)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func host(s *echo.Server) string {
	h, _, _ := net.SplitHostPort(s.Addr)
	return h
}

func clean[T interface{ GetObjectMeta() metav1.Object }](obj T) T {
	m := obj.GetObjectMeta()
	m.SetUID("")
	m.SetResourceVersion("")
	m.SetCreationTimestamp(metav1.Time{})
	return obj
}

func createService(t *testing.T, ns, name string) {
	t.Helper()
	_, err := w.Kube.CoreV1().Services(ns).Create(t.Context(), clean(fixtures.Service(ns, name, 80)), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Service %s: %v", name, err)
	}
}

// setEndpoints creates or replaces the EndpointSlice "<svc>-1" of svc with
// the given backends as ready endpoints.
func setEndpoints(t *testing.T, ns, svc string, backends ...*echo.Server) {
	t.Helper()
	addrs := make([]string, 0, len(backends))
	for _, b := range backends {
		addrs = append(addrs, host(b))
	}
	setEndpointAddrs(t, ns, svc, addrs...)
}

// setEndpointAddrs is setEndpoints with addresses (on backendPort).
func setEndpointAddrs(t *testing.T, ns, svc string, addrs ...string) {
	t.Helper()
	es := clean(fixtures.EndpointSlice(ns, svc+"-1", svc, backendPort, addrs...))
	api := w.Kube.DiscoveryV1().EndpointSlices(ns)
	cur, err := api.Get(t.Context(), es.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = api.Create(t.Context(), es, metav1.CreateOptions{})
	} else if err == nil {
		es.ResourceVersion = cur.ResourceVersion
		_, err = api.Update(t.Context(), es, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatalf("set EndpointSlice of %s: %v", svc, err)
	}
}

// service creates a Service named name with one backend and returns it.
func service(t *testing.T, ns, name string) *echo.Server {
	t.Helper()
	b := backend(t, name)
	createService(t, ns, name)
	setEndpoints(t, ns, name, b)
	return b
}

// applyIngress creates or updates an Ingress of our class.
func applyIngress(t *testing.T, ing *networkingv1.Ingress) {
	t.Helper()
	ing = clean(ing)
	api := w.Kube.NetworkingV1().Ingresses(ing.Namespace)
	cur, err := api.Get(t.Context(), ing.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = api.Create(t.Context(), ing, metav1.CreateOptions{})
		// Nothing garbage-collects here: remove it so that later tests
		// see only their own Ingresses (a spec.defaultBackend is global).
		t.Cleanup(func() {
			if err := api.Delete(context.Background(), ing.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete Ingress %s: %v", ing.Name, err)
			}
		})
	} else if err == nil {
		// The watcher writes the status at any time: read again on a
		// conflict with it.
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			ing.ResourceVersion = cur.ResourceVersion
			_, err := api.Update(t.Context(), ing, metav1.UpdateOptions{})
			if apierrors.IsConflict(err) {
				if latest, gerr := api.Get(t.Context(), ing.Name, metav1.GetOptions{}); gerr == nil {
					cur = latest
				}
			}
			return err
		})
	}
	if err != nil {
		t.Fatalf("apply Ingress %s: %v", ing.Name, err)
	}
}

func ours(ns, name string, opts ...fixtures.IngressOption) *networkingv1.Ingress {
	return fixtures.Ingress(ns, name, append([]fixtures.IngressOption{fixtures.Class(world.IngressClass)}, opts...)...)
}

func applySecret(t *testing.T, s *corev1.Secret) {
	t.Helper()
	s = clean(s)
	api := w.Kube.CoreV1().Secrets(s.Namespace)
	cur, err := api.Get(t.Context(), s.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = api.Create(t.Context(), s, metav1.CreateOptions{})
	} else if err == nil {
		s.ResourceVersion = cur.ResourceVersion
		_, err = api.Update(t.Context(), s, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatalf("apply Secret %s: %v", s.Name, err)
	}
}

// eventually polls fn every 100ms until it returns nil, failing the test
// with fn's last error after timeout.
func eventually(t *testing.T, timeout time.Duration, what string, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// hit is where a request must arrive: at backend ("" means the built-in
// 404) and, when path is set, with that path.
type hit struct{ backend, path string }

// reach checks that url, through syncer i, arrives where want says.
func reach(ctx context.Context, i int, roots *x509.CertPool, url string, want hit) error {
	r, err := echo.Get(ctx, w.Syncers[i].Client(roots), url)
	if err != nil {
		return err
	}
	switch {
	case want.backend == "" && (r.Status != 404 || r.Reply.Backend != ""):
		return fmt.Errorf("syncer-%d %s: status %d from %q, want the built-in 404", i, url, r.Status, r.Reply.Backend)
	case want.backend != "" && (r.Status != 200 || r.Reply.Backend != want.backend):
		return fmt.Errorf("syncer-%d %s: status %d from %q, want 200 from %q", i, url, r.Status, r.Reply.Backend, want.backend)
	case want.path != "" && r.Reply.Path != want.path:
		return fmt.Errorf("syncer-%d %s: %q saw path %q, want %q", i, url, want.backend, r.Reply.Path, want.path)
	}
	return nil
}

// reaches waits until every url arrives where it should through both
// syncers.
func reaches(t *testing.T, roots *x509.CertPool, want map[string]hit) {
	t.Helper()
	for i := range w.Syncers {
		for url, h := range want {
			eventually(t, waitTimeout, "route "+url, func() error { return reach(t.Context(), i, roots, url, h) })
		}
	}
}

// routes waits until every url routes to its backend ("" means the
// built-in 404) through both syncers.
func routes(t *testing.T, roots *x509.CertPool, want map[string]string) {
	t.Helper()
	hits := make(map[string]hit, len(want))
	for url, b := range want {
		hits[url] = hit{backend: b}
	}
	reaches(t, roots, hits)
}

// jetStream connects to the world's NATS for the rest of the test.
func jetStream(t *testing.T) jetstream.JetStream {
	t.Helper()
	return natstest.Dial(t, w.NATSURL).JetStream()
}

// streamLastSeq is the last sequence of the event stream.
func streamLastSeq(t *testing.T) uint64 {
	t.Helper()
	js := jetStream(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, world.Stream)
	if err != nil {
		t.Fatal(err)
	}
	return s.CachedInfo().State.LastSeq
}

// converged waits until every syncer reports the same checksum, applied
// at the stream's last sequence, and returns that checksum.
func converged(t *testing.T) string {
	t.Helper()
	var sum string
	eventually(t, waitTimeout, "syncers converge", func() error {
		last := streamLastSeq(t)
		sum = ""
		for _, s := range w.Syncers {
			st, ok := w.Status(s.Name)
			switch {
			case !ok || !st.Ready:
				return fmt.Errorf("%s not ready", s.Name)
			case st.Sequence < last:
				return fmt.Errorf("%s at sequence %d, stream at %d", s.Name, st.Sequence, last)
			case sum != "" && st.Checksum != sum:
				return fmt.Errorf("checksums differ: %s vs %s", st.Checksum, sum)
			}
			sum = st.Checksum
		}
		return nil
	})
	return sum
}

// pause stops syncer s (SIGSTOP) without it saying so: it still counts
// as current until its reports go stale. The returned resume (SIGCONT)
// also runs at the end of the test; calling it again does nothing.
func pause(t *testing.T, s *world.Syncer) func() {
	t.Helper()
	if err := s.Proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			if err := s.Proc.Signal(syscall.SIGCONT); err != nil {
				t.Errorf("SIGCONT %s: %v", s.Name, err)
			}
		}
	}
	t.Cleanup(resume)
	return resume
}

// reloads returns the reload count each syncer reported last.
func reloads(t *testing.T) []uint64 {
	t.Helper()
	out := make([]uint64, len(w.Syncers))
	for i, s := range w.Syncers {
		st, ok := w.Status(s.Name)
		if !ok {
			t.Fatalf("no status from %s", s.Name)
		}
		out[i] = st.Reloads
	}
	return out
}

// plane is what a reload changes on each syncer: the reload count it
// reports and its nginx processes (a reload replaces the workers).
type plane struct {
	reloads []uint64
	procs   []world.NginxProcesses
}

// snapshot records the plane, once each nginx runs only its own workers
// (the old workers of an earlier reload have exited).
func snapshot(t *testing.T) plane {
	t.Helper()
	p := plane{reloads: reloads(t), procs: make([]world.NginxProcesses, len(w.Syncers))}
	for i, s := range w.Syncers {
		eventually(t, waitTimeout, s.Name+" runs only its own workers", func() error {
			var err error
			if p.procs[i], err = s.Nginx(); err == nil && len(p.procs[i].Children) != world.NginxWorkers {
				err = fmt.Errorf("nginx has %d children, want %d workers", len(p.procs[i].Children), world.NginxWorkers)
			}
			return err
		})
	}
	return p
}

// unchanged fails the test unless every syncer still runs the nginx
// workers of p and reports the reload count of p: what did not reload.
func (p plane) unchanged(t *testing.T, what string) {
	t.Helper()
	now := reloads(t)
	for i, s := range w.Syncers {
		np, err := s.Nginx()
		switch {
		case err != nil:
			t.Errorf("%s: %v", s.Name, err)
		case !slices.Equal(np.Children, p.procs[i].Children) || np.Master != p.procs[i].Master:
			t.Errorf("%s: nginx went from %+v to %+v; %s must not reload", s.Name, p.procs[i], np, what)
		}
		if now[i] != p.reloads[i] {
			t.Errorf("%s: reloads went from %d to %d; %s must not reload", s.Name, p.reloads[i], now[i], what)
		}
	}
}

// loop sends requests to url through every syncer until stop is closed,
// counting failures (anything but 200 from one of want).
type loop struct {
	sent, failed atomic.Int64
	mu           sync.Mutex
	firstErr     error
	seen         sync.Map // backend name -> true
	stop         chan struct{}
	done         sync.WaitGroup
}

func startLoop(t *testing.T, url string, want ...string) *loop {
	return startLoopWith(t, func(i int) *http.Client { return w.Syncers[i].Client(nil) }, url, want...)
}

// startLoopWith is startLoop through client(i) of syncer i.
func startLoopWith(t *testing.T, client func(i int) *http.Client, url string, want ...string) *loop {
	l := &loop{stop: make(chan struct{})}
	ok := map[string]bool{}
	for _, b := range want {
		ok[b] = true
	}
	for i := range w.Syncers {
		c := client(i)
		l.done.Go(func() {
			for n := 0; n < 100000; n++ {
				select {
				case <-l.stop:
					return
				default:
				}
				r, err := echo.Get(t.Context(), c, url)
				l.sent.Add(1)
				if err == nil && (r.Status != 200 || !ok[r.Reply.Backend]) {
					err = fmt.Errorf("status %d from %q", r.Status, r.Reply.Backend)
				}
				if err != nil {
					l.fail(err)
					continue
				}
				l.seen.Store(r.Reply.Backend, true)
			}
		})
	}
	return l
}

func (l *loop) fail(err error) {
	l.failed.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.firstErr == nil {
		l.firstErr = err
	}
}

func (l *loop) finish(t *testing.T) {
	t.Helper()
	close(l.stop)
	l.done.Wait()
	if f := l.failed.Load(); f > 0 {
		t.Fatalf("%d of %d requests failed; first: %v", f, l.sent.Load(), l.firstErr)
	}
	t.Logf("%d requests, none failed", l.sent.Load())
}

func (l *loop) saw(backend string) bool {
	_, ok := l.seen.Load(backend)
	return ok
}
