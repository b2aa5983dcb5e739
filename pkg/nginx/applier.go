package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"slices"

	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ingress-sync/ingress-sync/internal/retry"
)

// Signaler is what the Applier needs of a Process: a way to signal the
// nginx master and its pid (0 when not running).
type Signaler interface {
	Signal(sig os.Signal) error
	Pid() int
}

// ReloadStats describes the last reload.
type ReloadStats struct {
	Skipped bool          // nginx.conf did not change: no reload happened
	Render  time.Duration // rendering nginx.conf
	Test    time.Duration // nginx -t
	Confirm time.Duration // from SIGHUP to a new worker serving the new checksum
}

// Applier owns what nginx serves: the running Configuration. Apply brings
// nginx to the next one by acting on the Change its caller computed (it
// never diffs Configurations itself): deltas to the Lua endpoints (routes,
// backends, certificates) and, only when the nginx.conf rendered for next
// differs from the installed one (global settings, backend TLS profiles,
// L4 listeners), a tested and confirmed reload. Restore pushes the whole
// state again after nginx restarted. Methods are serialised.
type Applier struct {
	opts     Options
	renderer *Renderer
	client   *Client
	proc     Signaler
	log      *slog.Logger

	mu      sync.Mutex
	version uint64
	// running is the Configuration nginx serves (nil before WriteConfig or
	// the first Apply), which Restore pushes. conf is the checksum of the
	// installed nginx.conf, and global and listeners what it was rendered
	// from (see installed).
	running   *config.Configuration
	conf      string
	global    config.Global
	listeners []l4Listener
	// gateway are the Gateway listener ports the installed file listens on.
	gateway []config.Listener
	// dirty: the Lua side may differ from running (a failed push, a
	// restart): the next push sends everything.
	dirty bool
	stats ReloadStats
	// profiles are the backend TLS profiles of the running nginx.conf
	// (and those nginx refused): see proxyssl.go.
	profiles map[string]bool
	// errorSets are the names of the error code sets of the running
	// nginx.conf (errorsets.go).
	errorSets map[string]bool
	// modSecProfiles are the names of the ModSecurity profiles of the
	// running nginx.conf (modsecurity.go).
	modSecProfiles map[string]bool
	// streamWritten are the stream endpoint files as last written, by
	// name (streamfiles.go).
	streamWritten map[string][]byte
	// restoreStats describes the last Restore.
	restoreStats RestoreStats
}

// RestoreStats describes the last Restore: what it sent to a new nginx
// master (everything, to a fresh one; only what differs, to one that
// outlived its syncer) and whether nginx ran another nginx.conf, which
// it then reloaded.
type RestoreStats struct {
	Hosts, Backends, Certificates, Removed int
	Reloaded                               bool
}

// LastRestore returns the statistics of the last Restore.
func (a *Applier) LastRestore() RestoreStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.restoreStats
}

// NewApplier validates opts, prepares opts.Dir (see Prepare) and returns an
// Applier that signals proc (nil allows only WriteConfig).
func NewApplier(opts Options, proc Signaler) (*Applier, error) {
	r, err := NewRenderer(opts)
	if err != nil {
		return nil, err
	}
	o := r.Options()
	if err := Prepare(o); err != nil {
		return nil, err
	}
	return &Applier{
		opts:     o,
		renderer: r,
		client:   NewClient(o.StatusPort, o.RequestTimeout),
		proc:     proc,
		log:      o.Logger.With("component", "nginx-applier"),
		dirty:    true,
	}, nil
}

// Client returns the Lua endpoint client the Applier uses.
func (a *Applier) Client() *Client { return a.client }

// Renderer returns the Applier's renderer.
func (a *Applier) Renderer() *Renderer { return a.renderer }

// LastReload returns the timings of the last reload.
func (a *Applier) LastReload() ReloadStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats
}

// Running returns the Configuration nginx serves, nil before the first.
// It must not be modified.
func (a *Applier) Running() *config.Configuration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.running
}

// WriteConfig renders and tests nginx.conf for cfg and installs it without
// signalling nginx: the bootstrap step before Process.Start. cfg becomes the
// running Configuration, which Restore (the Process OnStart hook) pushes.
func (a *Applier) WriteConfig(ctx context.Context, cfg *config.Configuration) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	conf, sum, err := a.render(cfg)
	if err != nil {
		return err
	}
	if conf, sum, err = a.testConf(ctx, cfg, conf, sum); err != nil {
		return err
	}
	files, err := a.streamFiles(cfg)
	if err != nil {
		return err
	}
	if err := a.writeStreamFiles(files, true); err != nil {
		return err
	}
	if err := writeFileAtomic(a.opts.confPath(), conf, 0o644); err != nil {
		return err
	}
	a.running, a.dirty = cfg, true
	a.installed(cfg, sum)
	a.removeStaleProfiles(cfg.UpstreamTLS) // of an earlier run
	a.removeStaleStreamFiles(files)
	return nil
}

// render renders nginx.conf for cfg's global settings and records the time
// it took.
func (a *Applier) render(cfg *config.Configuration) ([]byte, string, error) {
	start := time.Now()
	conf, sum, err := a.renderer.render(cfg, cfg.UpstreamTLS)
	a.stats = ReloadStats{Render: time.Since(start)}
	if err == nil {
		err = a.writeModSecurity(modSecProfilesOf(cfg.Servers))
	}
	return conf, sum, err
}

// Apply makes nginx serve next, where ch is config.Diff(Running(), next)
// (its caller decides what changed, once), and reports whether nginx
// reloaded. Routes, backends and certificates go to the Lua endpoints in an
// order that never lets a request see a route before its backend or
// certificate: new and changed backends and certificates first, then the
// routes (with next's checksum), then the removal of certificates and
// backends no route uses any more. When nginx.conf changes (global
// settings), the reload comes first: it is rendered, tested with nginx -t,
// swapped in and confirmed by the new workers (which share the Lua state of
// the old ones); on failure the previous file stays (or is put back),
// nothing is pushed, and the error wraps ErrConfigTest,
// ErrReloadNotConfirmed, ErrInvalidValue or ErrNotRunning. The endpoint
// files of the stream servers are written before any reload (a failure
// wraps ErrStreamFiles). Whatever fails, the next Apply pushes the whole
// state of its Configuration instead of its Change.
func (a *Applier) Apply(ctx context.Context, next *config.Configuration, ch config.Change) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	// Until it is known, a failure counts as a reload when ch or a whole
	// push (dirty) would be one.
	early := ch.Reload || a.dirty
	// Only the servers that changed can bring a new error code set, unless
	// the Lua side may differ from the running Configuration.
	changed := ch.ServersUpserted
	if a.dirty {
		changed = next.Servers
	}
	conf, sum, err := a.renderIfChanged(next, changed)
	if err != nil {
		return early, err
	}
	// The endpoint files first: a new listener never starts without one.
	files, err := a.streamFiles(next)
	if err == nil {
		err = a.writeStreamFiles(files, a.dirty)
	}
	if err != nil {
		a.dirty = true
		return early, err
	}
	reload := conf != nil
	if !reload {
		a.stats = ReloadStats{Skipped: true}
	} else if conf, sum, err = a.testConf(ctx, next, conf, sum); err != nil {
		return true, err
	}
	if _, err := a.pushChange(ctx, next, &ch, reload, conf, sum); err != nil {
		a.dirty = true
		return reload, err
	}
	if reload {
		a.removeStaleProfiles(next.UpstreamTLS)
		a.removeStaleStreamFiles(files)
	}
	a.running = next
	return reload, nil
}

// pushChange pushes ch, or the whole of next less what the Lua side holds
// when dirty (ch is then not read), after the reload when reload is set:
// no route depends on nginx.conf, and a reload that fails then leaves
// nginx serving the previous Configuration as a whole. It returns what it
// sent.
func (a *Applier) pushChange(ctx context.Context, next *config.Configuration, ch *config.Change, reload bool, conf []byte, sum string) (RestoreStats, error) {
	if reload {
		old, _ := os.ReadFile(a.opts.confPath())
		if err := a.swapAndConfirm(ctx, conf, old, sum); err != nil {
			return RestoreStats{}, err
		}
		a.installed(next, sum)
	}
	var d delta
	if a.dirty {
		h, err := a.fetchHeld(ctx)
		if err != nil {
			return RestoreStats{}, err
		}
		d = stateOf(next)
		d.against(h)
		a.dirty = false
	} else {
		d = deltaOf(ch, next.Checksum)
	}
	sent := RestoreStats{Hosts: len(d.hosts), Backends: len(d.backends), Certificates: len(d.certificates),
		Removed: len(d.hostsRemoved) + len(d.backendsRemoved) + len(d.certificatesRemove)}
	if err := a.pushUpserts(ctx, &d); err != nil {
		return sent, err
	}
	return sent, a.pushRemovals(ctx, &d)
}

// installed records that the nginx.conf rendered for cfg, with checksum
// sum, is installed.
func (a *Applier) installed(cfg *config.Configuration, sum string) {
	a.conf, a.global, a.listeners, a.gateway = sum, cfg.Global, listenersOf(cfg.L4, cfg.Streams), cfg.Listeners
	a.profiles = profileSet(cfg.UpstreamTLS)
	a.errorSets = errorSetNames(errorSetsOf(cfg.Servers))
	a.modSecProfiles = modSecNames(modSecProfilesOf(cfg.Servers))
}

// renderIfChanged returns nginx.conf for next and its checksum when it
// differs from the installed file, and nil otherwise. nginx.conf depends on
// the options, next.Global, its backend TLS profiles, its L4 and Gateway
// listeners and its routes' error code sets only, so the global settings and listeners
// the installed file was rendered from and no new profile, nor a new code
// set among the changed servers, skip the rendering: an endpoint change
// does no template work, and a profile no route uses any more stays until
// the next reload.
func (a *Applier) renderIfChanged(next *config.Configuration, changed []config.Server) ([]byte, string, error) {
	if a.conf != "" && next.Global == a.global && a.hasProfiles(next.UpstreamTLS) && slices.Equal(listenersOf(next.L4, next.Streams), a.listeners) &&
		config.SameListenPorts(next.Listeners, a.gateway) && a.hasErrorSets(errorSetsOf(changed)) &&
		a.hasModSecProfiles(modSecProfilesOf(changed)) {
		return nil, "", nil
	}
	conf, sum, err := a.render(next)
	switch {
	case err != nil:
		return nil, "", err
	case sum == a.conf: // the installed file is next's too
		a.global, a.listeners, a.gateway = next.Global, listenersOf(next.L4, next.Streams), next.Listeners
		return nil, "", nil
	}
	return conf, sum, nil
}

// Restore brings a new nginx master to the running state: it is the
// Runner's OnStart hook. A master started from the running nginx.conf
// holds nothing yet and is sent the whole state; one that outlived a
// previous syncer (Attached) is sent only the hosts, backends and
// certificates that differ from what it holds, and is reloaded only when
// it runs another nginx.conf.
func (a *Applier) Restore(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.dirty = true
	if a.running == nil {
		return nil
	}
	files, err := a.streamFiles(a.running)
	if err == nil {
		err = a.writeStreamFiles(files, true)
	}
	if err != nil {
		return err
	}
	reloaded, err := a.reloadIfOther(ctx)
	if err != nil {
		return err
	}
	sent, err := a.pushChange(ctx, a.running, nil, false, nil, "")
	if err != nil {
		a.dirty = true
		return err
	}
	sent.Reloaded = reloaded
	a.restoreStats = sent
	a.log.Info("dynamic state pushed", "hosts", sent.Hosts, "backends", sent.Backends, "certificates", sent.Certificates,
		"removed", sent.Removed, "reloaded", reloaded)
	return nil
}

// reloadIfOther reloads nginx when it serves another nginx.conf than the
// running one (it outlived a syncer whose global settings were older).
func (a *Applier) reloadIfOther(ctx context.Context) (bool, error) {
	v, err := a.client.GetVersion(ctx)
	if err != nil {
		return false, err
	}
	if v.Checksum == a.conf {
		return false, nil
	}
	conf, err := os.ReadFile(a.opts.confPath())
	if err != nil {
		return false, fmt.Errorf("nginx.conf: %w", err)
	}
	a.log.Info("nginx runs another nginx.conf; reloading", "serves", v.Checksum, "checksum", a.conf)
	return true, a.swapAndConfirm(ctx, conf, nil, a.conf)
}

// test writes conf to a temporary file in Dir and runs nginx -t on it.
func (a *Applier) test(ctx context.Context, conf []byte) error {
	f, err := os.CreateTemp(a.opts.Dir, ".nginx.conf.test-*")
	if err != nil {
		return fmt.Errorf("nginx -t: %w", err)
	}
	defer os.Remove(f.Name())
	_, werr := f.Write(conf)
	if err := f.Close(); werr != nil || err != nil {
		return fmt.Errorf("nginx -t: write %s: %w", f.Name(), cmp.Or(werr, err))
	}
	start := time.Now()
	defer func() { a.stats.Test = time.Since(start) }()
	ctx, cancel := context.WithTimeout(ctx, a.opts.ReloadTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.opts.NginxBinary, "-t", "-q", "-p", a.opts.Dir, "-c", f.Name(), "-e", "stderr")
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("%w: %s", ErrConfigTest, msg)
	}
	return nil
}

// swapAndConfirm installs conf, reloads nginx and confirms; on failure it
// puts old back and reloads again.
func (a *Applier) swapAndConfirm(ctx context.Context, conf, old []byte, sum string) error {
	if err := writeFileAtomic(a.opts.confPath(), conf, 0o644); err != nil {
		return err
	}
	logMark := errorMark(a.proc)
	start := time.Now()
	err := ErrNotRunning
	var oldWorkers []int
	if a.proc != nil {
		oldWorkers, _ = childPIDs(a.proc.Pid()) // best effort: without it only the checksum is checked
		err = a.proc.Signal(syscall.SIGHUP)
	}
	if err == nil {
		err = a.confirm(ctx, sum, oldWorkers)
		a.stats.Confirm = time.Since(start)
	}
	if err == nil {
		a.log.Info("nginx reloaded", "checksum", sum, "confirm", a.stats.Confirm)
		return nil
	}
	if msg := errorsSince(a.proc, logMark); msg != "" {
		err = fmt.Errorf("%w; nginx error log: %s", err, msg)
	}
	if old != nil {
		if rerr := writeFileAtomic(a.opts.confPath(), old, 0o644); rerr != nil {
			return fmt.Errorf("%w; restoring the previous nginx.conf: %w", err, rerr)
		}
		if a.proc != nil {
			_ = a.proc.Signal(syscall.SIGHUP)
		}
	}
	a.log.Error("nginx reload failed; previous configuration kept", "checksum", sum, "err", err)
	return err
}

// confirm waits until a worker serves sum and every worker that ran
// before the reload has stopped accepting connections (its title says
// "shutting down" or it is gone), so that every request after confirm is
// served by the new configuration.
func (a *Applier) confirm(ctx context.Context, sum string, oldWorkers []int) error {
	ctx, cancel := context.WithTimeout(ctx, a.opts.ReloadTimeout)
	defer cancel()
	var last Version
	var lastErr error
	served := retry.Poll(ctx, confirmPoll, func() bool {
		v, err := a.client.GetVersion(ctx)
		if err == nil {
			last = v
		}
		lastErr = err
		return err == nil && v.Checksum == sum
	})
	if !served {
		return fmt.Errorf("%w: checksum %q not served within %s (workers serve %q, last error: %v)",
			ErrReloadNotConfirmed, sum, a.opts.ReloadTimeout, last.Checksum, lastErr)
	}
	if !retry.Poll(ctx, confirmPoll, func() bool { return retired(oldWorkers) }) {
		return fmt.Errorf("%w: workers of the previous configuration still accept connections after %s",
			ErrReloadNotConfirmed, a.opts.ReloadTimeout)
	}
	return nil
}

// confirmPoll paces the polls of confirm: a growing pause of 1 to 20 ms.
var confirmPoll = retry.Backoff{Base: time.Millisecond, Max: 20 * time.Millisecond}
