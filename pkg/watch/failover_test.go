package watch_test

import (
	"context"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/watch"
	"github.com/ingress-sync/ingress-sync/test/testkit/proc"
)

// failoverTarget is the failover time the default lease timings are chosen
// for (docs/deploy.md, "Watcher failover"); the test reports against it and
// does not assert it.
const failoverTarget = 5 * time.Second

// TestFailoverAfterSIGKILL: two watcher processes (./cmd/watcher, with the
// default lease timings) under churn of one Service. The leader is killed
// with SIGKILL, which releases nothing, and the standby takes over and
// publishes. Three rounds, the killed one restarted as the standby each
// time. The time from the kill to the new leader's first message in the
// stream (stream time) is logged; the test asserts only that the new
// leader publishes.
func TestFailoverAfterSIGKILL(t *testing.T) {
	e := newEnv(t)
	ws := newWatcherProcs(t, e)
	ws.start(t, "watcher-a")
	ws.start(t, "watcher-b")
	e.create(t, service(e.ns, "web"))
	subject := e.subject(events.KindService, "web")
	e.waitMessage(t, subject, events.OpCreate)
	stop := e.churnService(t, "web")
	defer stop()

	var took []time.Duration
	for range 3 {
		leader := e.leaseHolder(t)
		standby := ws.other(leader)
		eventually(t, standby+" ready", func() bool { return ws.ready(standby) })
		after := e.lastSeq(t)
		killed := time.Now()
		ws.kill(t, leader)
		at := e.firstPublishBy(t, after, standby)
		took = append(took, at.Sub(killed))
		ws.start(t, leader)
	}
	stop()
	worst := slices.Max(took)
	t.Logf("failover after SIGKILL (lease %s, renew deadline %s, retry period %s): %v; worst %s, target %s",
		watch.DefaultLeaseDuration, watch.DefaultRenewDeadline, watch.DefaultRetryPeriod, took,
		worst.Round(time.Millisecond), failoverTarget)
	if worst > failoverTarget {
		t.Logf("NOTE: the worst failover is over the %s target", failoverTarget)
	}
}

// watcherProcs are watcher processes of one env, by id.
type watcherProcs struct {
	e          *env
	bin, dir   string
	kubeconfig string
	procs      map[string]*proc.Process
	addrs      map[string]string
}

const failoverElectionID = "failover"

func newWatcherProcs(t *testing.T, e *env) *watcherProcs {
	t.Helper()
	dir := t.TempDir()
	ws := &watcherProcs{e: e, bin: buildWatcher(t, dir), dir: dir, kubeconfig: filepath.Join(dir, "kubeconfig"),
		procs: map[string]*proc.Process{}, addrs: map[string]string{}}
	if err := controlPlane.WriteKubeconfig(ws.kubeconfig); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for id, p := range ws.procs {
			_ = p.Stop(5 * time.Second)
			if t.Failed() {
				t.Logf("log of %s:\n%s", id, p.LogTail(8000))
			}
		}
	})
	return ws
}

// buildWatcher builds ./cmd/watcher into dir.
func buildWatcher(t *testing.T, dir string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "watcher")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, goBin, "build", "-o", bin, "github.com/ingress-sync/ingress-sync/cmd/watcher").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./cmd/watcher: %v\n%s", err, out)
	}
	return bin
}

// start starts (or restarts) the watcher id.
func (ws *watcherProcs) start(t *testing.T, id string) {
	t.Helper()
	if ws.addrs[id] == "" {
		ws.addrs[id] = freeAddr(t)
	}
	e := ws.e
	args := []string{"--kubeconfig", ws.kubeconfig, "--nats-url", e.nats.URL(), "--stream", streamName,
		"--subject-prefix", prefix, "--watch-namespace", e.ns, "--controller-class", e.controller(),
		"--election-namespace", e.ns, "--election-id", failoverElectionID, "--watcher-id", id,
		"--metrics-addr", ws.addrs[id], "--workers", "1"}
	p, err := proc.Start(id, ws.bin, filepath.Join(ws.dir, id+".log"), args, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.procs[id] = p
}

// kill sends SIGKILL to the watcher id and waits for it to exit.
func (ws *watcherProcs) kill(t *testing.T, id string) {
	t.Helper()
	p := ws.procs[id]
	if err := p.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.Done()
}

// other is the id of the watcher that is not id.
func (ws *watcherProcs) other(id string) string {
	for o := range ws.procs {
		if o != id {
			return o
		}
	}
	return ""
}

// ready reports whether the watcher id answers /readyz (caches synced, NATS
// connected).
func (ws *watcherProcs) ready(id string) bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + ws.addrs[id] + "/readyz")
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// leaseHolder waits for a holder of the failover Lease and returns it.
func (e *env) leaseHolder(t *testing.T) string {
	t.Helper()
	var holder string
	eventually(t, "a Lease holder", func() bool {
		l, err := e.client.CoordinationV1().Leases(e.ns).Get(t.Context(), failoverElectionID, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return false
		}
		holder = *l.Spec.HolderIdentity
		return holder != ""
	})
	return holder
}

// firstPublishBy waits for the first message after sequence after that id
// published, and returns its stream time.
func (e *env) firstPublishBy(t *testing.T, after uint64, id string) time.Time {
	t.Helper()
	var at time.Time
	next := after + 1
	eventually(t, "a message published by "+id, func() bool {
		ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
		defer cancel()
		s, err := e.js.Stream(ctx, streamName)
		if err != nil {
			return false
		}
		for ; next <= e.lastSeq(t); next++ {
			raw, err := s.GetMsg(ctx, next)
			if err != nil {
				continue
			}
			if ev, err := events.Decode(raw.Data); err == nil && ev.WatcherID == id {
				at = raw.Time
				return true
			}
		}
		return false
	})
	return at
}

// churnService changes the port of a Service every 100ms until the
// returned function is called. Errors are ignored: a failed update is
// the next one's to make.
func (e *env) churnService(t *testing.T, name string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			svc, err := e.client.CoreV1().Services(e.ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				continue
			}
			svc.Spec.Ports[0].Port = int32(1000 + i%30000)
			_, _ = e.client.CoreV1().Services(e.ns).Update(ctx, svc, metav1.UpdateOptions{})
		}
	}()
	var once bool
	return func() {
		if !once {
			once = true
			cancel()
			<-done
		}
	}
}
