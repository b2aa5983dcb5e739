package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// summed returns b with its Checksum, as model.Build sets it.
func summed(b config.Backend) config.Backend {
	b.Checksum = config.BackendChecksum(&b)
	return b
}

// attachedSyncer is a second Applier following h's nginx as a syncer with
// --nginx-mode=external does: the syncer that restarts after a crash,
// while h's Process plays the keeper (`syncer nginx`).
type attachedSyncer struct {
	app    *Applier
	att    *Attached
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

// attach writes cfg as a restarted syncer's first Apply does and starts
// following h's nginx, waiting until the start hook has run.
func attach(t *testing.T, h *harness, cfg *config.Configuration) *attachedSyncer {
	t.Helper()
	// h's Applier was the syncer that crashed: from now on h's Process is
	// the keeper, which runs no hooks.
	h.proc.hooks.mu.Lock()
	h.proc.hooks.list = nil
	h.proc.hooks.mu.Unlock()
	att, err := NewAttached(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	app, err := NewApplier(h.opts, att)
	if err != nil {
		t.Fatal(err)
	}
	att.OnStart(app.Restore)
	ctx, cancel := context.WithCancel(context.Background())
	s := &attachedSyncer{app: app, att: att, cancel: cancel, done: make(chan error, 1)}
	t.Cleanup(s.stop)
	if err := app.WriteConfig(ctx, cfg); err != nil {
		t.Fatalf("write config: %v", err)
	}
	go func() { s.done <- att.Start(ctx) }()
	select {
	case <-att.Ready():
	case <-time.After(testWait):
		t.Fatalf("attached syncer not ready after %s\n%s", testWait, h.logs())
	}
	return s
}

func (s *attachedSyncer) stop() {
	s.once.Do(func() {
		s.cancel()
		<-s.done
	})
}

// attachFixture starts nginx serving two hosts on two backends, and
// returns it with its Configuration and the echo servers.
func attachFixture(t *testing.T) (*harness, *config.Configuration, []config.Backend) {
	a, b := startEcho(t, "a"), startEcho(t, "b")
	backends := []config.Backend{summed(backendOf("a", a)), summed(backendOf("b", b))}
	cfg := configOf("adopt-1", []config.Server{serverOf("a.test", prefixLoc("/", "a")), serverOf("b.test", prefixLoc("/", "b"))}, backends...)
	h := startNginx(t, cfg, nil)
	checkServed(t, h, "http://a.test/", 200, "a")
	checkServed(t, h, "http://b.test/", 200, "b")
	return h, cfg, backends
}

// A syncer that restarts next to a running nginx adopts it: the same
// master and workers serve on, nothing is reloaded, and only what changed
// while no syncer ran is sent.
func TestAttachedAdoptsRunningNginxWithADelta(t *testing.T) {
	h, _, backends := attachFixture(t)
	master, workers := h.proc.Pid(), workerPIDs(t, h.proc.Pid())

	c := startEcho(t, "c")
	moved := summed(backendOf("b", c)) // b's endpoints changed
	next := configOf("adopt-2", []config.Server{serverOf("a.test", prefixLoc("/", "a")), serverOf("c.test", prefixLoc("/", "b"))},
		backends[0], moved) // b.test removed, c.test added
	s := attach(t, h, next)

	want := RestoreStats{Hosts: 1, Backends: 1, Removed: 1}
	if got := s.app.LastRestore(); got != want {
		t.Errorf("restore sent %+v, want %+v", got, want)
	}
	if s.att.Pid() != master || h.proc.Starts() != 1 {
		t.Errorf("followed master %d (starts %d), want the running %d", s.att.Pid(), h.proc.Starts(), master)
	}
	if got := workerPIDs(t, master); !slices.Equal(got, workers) {
		t.Errorf("workers changed: %v -> %v", workers, got)
	}
	checkServed(t, h, "http://a.test/", 200, "a")
	checkServed(t, h, "http://c.test/", 200, "c")
	if r := h.mustGet("http://b.test/"); r.Status != 404 {
		t.Errorf("removed host b.test = %d, want 404", r.Status)
	}
	if v := h.mustVersion(); v.Configuration != "adopt-2" {
		t.Errorf("configuration checksum = %q, want adopt-2", v.Configuration)
	}
}

// An adopted nginx that runs another nginx.conf (the global settings
// changed while no syncer ran) is reloaded once, and confirmed.
func TestAttachedReloadsAnOtherNginxConf(t *testing.T) {
	h, cfg, _ := attachFixture(t)
	workers := workerPIDs(t, h.proc.Pid())
	next := *cfg
	next.Checksum = "adopt-global"
	next.Global.UpstreamKeepalive = 64 // nginx.conf's upstream keepalive
	s := attach(t, h, &next)
	if st := s.app.LastRestore(); !st.Reloaded || st.Hosts != 0 || st.Backends != 0 {
		t.Errorf("restore = %+v, want a reload and nothing sent", st)
	}
	if v := h.mustVersion(); v.Checksum != h.confChecksum(&next) {
		t.Errorf("nginx serves nginx.conf %q, want %q", v.Checksum, h.confChecksum(&next))
	}
	if got := workerPIDs(t, h.proc.Pid()); slices.Equal(got, workers) {
		t.Errorf("workers unchanged after the reload: %v", got)
	}
	checkServed(t, h, "http://a.test/", 200, "a")
}

// When the master it follows dies and another starts (the keeper restarts
// nginx), Attached follows the new one and the whole state is sent to its
// empty shared dicts; its own stop leaves nginx running.
func TestAttachedFollowsANewMaster(t *testing.T) {
	h, cfg, _ := attachFixture(t)
	s := attach(t, h, cfg)
	if st := s.app.LastRestore(); st != (RestoreStats{}) {
		t.Errorf("adopting an nginx that holds the state sent %+v, want nothing", st)
	}
	master := h.proc.Pid()
	if err := syscall.Kill(master, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new master followed", func() bool { p := s.att.Pid(); return p != 0 && p != master })
	waitFor(t, "requests served again", func() bool {
		r, err := h.get("http://b.test/")
		return err == nil && r.Status == 200 && r.Reply.Backend == "b"
	})
	if st := s.app.LastRestore(); st.Hosts != len(cfg.Servers) || st.Backends != 2 {
		t.Errorf("restore to the new master sent %+v, want every host and backend", st)
	}
	followed := s.att.Pid()
	s.stop()
	if !alive(followed) || h.proc.Pid() != followed {
		t.Errorf("nginx %d stopped with the attached syncer", followed)
	}
	if err := s.att.Signal(syscall.SIGHUP); err == nil {
		t.Errorf("Signal after Start returned: want ErrNotRunning")
	}
}

// A pid file that names no nginx master of this directory is not followed.
func TestIsMaster(t *testing.T) {
	h, _, _ := attachFixture(t)
	if !isMaster(h.proc.Pid(), h.opts.confPath()) {
		t.Errorf("the running master is not recognised")
	}
	if isMaster(h.proc.Pid(), "/elsewhere/nginx.conf") {
		t.Errorf("a master of another directory is recognised")
	}
	if w := workerPIDs(t, h.proc.Pid()); isMaster(w[0], h.opts.confPath()) {
		t.Errorf("a worker is taken for the master")
	}
	if isMaster(syscall.Getpid(), h.opts.confPath()) {
		t.Errorf("the test process is taken for the master")
	}
}
