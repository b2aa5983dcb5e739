package nginx

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/model"
)

// Signaler is what the Applier needs of a Process: a way to signal the
// nginx master and its pid (0 when not running).
type Signaler interface {
	Signal(sig os.Signal) error
	Pid() int
}

// ReloadStats describes the last Reload.
type ReloadStats struct {
	Skipped bool          // nginx.conf did not change: no reload happened
	Render  time.Duration // rendering nginx.conf
	Test    time.Duration // nginx -t
	Confirm time.Duration // from SIGHUP to a new worker serving the new checksum
}

// Applier applies Configurations to a running nginx: by reload when
// nginx.conf changes (Reload), otherwise through the Lua endpoints (Update).
// It keeps the dynamic state it applied (backends and certificates) so that
// Restore can push it again after nginx restarted. Methods are serialised.
type Applier struct {
	opts     Options
	renderer *Renderer
	client   *Client
	proc     Signaler
	log      *slog.Logger

	mu       sync.Mutex
	version  uint64
	backends map[string]model.Backend
	certs    map[string]model.Certificate
	// defaultCert is the name of the default certificate.
	defaultCert string
	dirty       bool   // the Lua side may differ from the record: push everything
	running     string // checksum of the nginx.conf confirmed or written
	stats       ReloadStats
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
		backends: map[string]model.Backend{},
		certs:    map[string]model.Certificate{},
		dirty:    true,
	}, nil
}

// Client returns the Lua endpoint client the Applier uses.
func (a *Applier) Client() *Client { return a.client }

// Renderer returns the Applier's renderer.
func (a *Applier) Renderer() *Renderer { return a.renderer }

// LastReload returns the timings of the last Reload.
func (a *Applier) LastReload() ReloadStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats
}

// WriteConfig renders and tests cfg and installs it as nginx.conf without
// signalling nginx: the bootstrap step before Process.Start. It records the
// dynamic state of cfg for Restore (which the Process OnStart hook runs).
func (a *Applier) WriteConfig(ctx context.Context, cfg *model.Configuration) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	conf, err := a.render(cfg)
	if err != nil {
		return err
	}
	if err := a.test(ctx, conf); err != nil {
		return err
	}
	if err := writeFileAtomic(a.opts.confPath(), conf, 0o644); err != nil {
		return err
	}
	a.running = cfg.Checksum
	a.setDynamic(cfg)
	a.dirty = true
	return nil
}

// render renders cfg, which must have a checksum (the reload is confirmed
// by it), and records the time it took.
func (a *Applier) render(cfg *model.Configuration) ([]byte, error) {
	if cfg.Checksum == "" {
		return nil, fmt.Errorf("%w: configuration has no checksum", ErrInvalidValue)
	}
	start := time.Now()
	conf, err := a.renderer.Render(cfg)
	a.stats = ReloadStats{Render: time.Since(start)}
	return conf, err
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

// Reload makes nginx run cfg. It renders and tests nginx.conf, pushes new or
// changed backends and certificates, swaps the file atomically, sends
// SIGHUP and waits until a new worker serves cfg.Checksum; then it removes
// the backends and certificates cfg no longer has. When nginx.conf did not
// change, only the dynamic state is synchronised. On failure the previous
// nginx.conf stays (or is put back and reloaded) and the error wraps
// ErrInvalidValue, ErrConfigTest, ErrReloadNotConfirmed or ErrNotRunning.
func (a *Applier) Reload(ctx context.Context, cfg *model.Configuration) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	conf, err := a.render(cfg)
	if err != nil {
		return err
	}
	old, err := os.ReadFile(a.opts.confPath())
	if err == nil && bytes.Equal(old, conf) && a.running == cfg.Checksum {
		a.stats.Skipped = true
		return a.syncDynamic(ctx, cfg, true)
	}
	if err := a.test(ctx, conf); err != nil {
		return err
	}
	if err := a.syncDynamic(ctx, cfg, false); err != nil {
		return fmt.Errorf("push dynamic state before reload: %w", err)
	}
	if err := a.swapAndConfirm(ctx, conf, old, cfg.Checksum); err != nil {
		return err
	}
	a.running = cfg.Checksum
	return a.syncDynamic(ctx, cfg, true)
}

// swapAndConfirm installs conf, reloads nginx and confirms; on failure it
// puts old back and reloads again.
func (a *Applier) swapAndConfirm(ctx context.Context, conf, old []byte, sum string) error {
	if err := writeFileAtomic(a.opts.confPath(), conf, 0o644); err != nil {
		return err
	}
	logOffset := fileSize(a.opts.errorLogPath())
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
	if msg := errorLogSince(a.opts.errorLogPath(), logOffset); msg != "" {
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
	served := poll(ctx, func() bool {
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
	if !poll(ctx, func() bool { return retired(oldWorkers) }) {
		return fmt.Errorf("%w: workers of the previous configuration still accept connections after %s",
			ErrReloadNotConfirmed, a.opts.ReloadTimeout)
	}
	return nil
}

// poll calls done with a growing pause (1 to 20 ms) until it returns true
// or ctx ends.
func poll(ctx context.Context, done func() bool) bool {
	wait := time.Millisecond
	for !done() {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
		wait = min(2*wait, 20*time.Millisecond)
	}
	return true
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// errorLogSince returns the error-level lines written to the error log after
// offset (at most 5, from the last 64 KiB).
func errorLogSince(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if size := fileSize(path); size-offset > 64<<10 {
		offset = size - 64<<10
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	data, _ := io.ReadAll(io.LimitReader(f, 64<<10))
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, "[emerg]") || strings.Contains(l, "[alert]") || strings.Contains(l, "[crit]") || strings.Contains(l, "[error]") {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, " | ")
}

// Restore pushes the whole dynamic state again: every backend and
// certificate, and the removal of whatever else the Lua side holds. Use it
// as the Process OnStart hook.
func (a *Applier) Restore(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.dirty = true
	return a.pushAll(ctx)
}

// Update applies the dynamic part of ch through the Lua endpoints, without a
// reload: only the changed and removed backends and certificates (and a new
// default certificate name) are sent. ch.Reload is not acted on here; call
// Reload with the new Configuration.
func (a *Applier) Update(ctx context.Context, ch model.Change) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	d := delta{
		backends: ch.BackendsUpserted, backendsRemoved: ch.BackendsRemoved,
		certificates: ch.CertificatesUpserted, certificatesRemove: ch.CertificatesRemoved,
		defaultCertificate: ch.DefaultCertificate,
	}
	a.record(&d)
	if a.dirty {
		return a.pushAll(ctx)
	}
	return a.push(ctx, &d)
}
