package nginx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ingress-sync/ingress-sync/internal/retry"
)

// restartBackoff paces the restarts of nginx after it died, and the
// retries of a failed start hook.
var restartBackoff = retry.Backoff{Base: 100 * time.Millisecond, Max: 10 * time.Second}

const (
	// stableRun resets the backoff: nginx ran this long before dying.
	stableRun = 30 * time.Second
	// killGrace is added to WorkerShutdownTimeout before SIGKILL.
	killGrace = 2 * time.Second
)

// StartHook runs after every start of nginx, once the status server answers;
// ctx ends when that nginx exits. Lua shared dicts start empty after a start,
// so the hook must push the whole dynamic state (Applier.Restore does).
type StartHook func(ctx context.Context) error

// Process runs nginx as a child process and keeps it running.
type Process struct {
	hooks
	opts   Options
	errors errorLog // nginx's recent error-level lines

	mu     sync.Mutex
	cmd    *exec.Cmd
	starts int
}

// NewProcess validates opts. nginx.conf must exist in opts.Dir before Start
// (Applier.WriteConfig writes it).
func NewProcess(opts Options) (*Process, error) {
	o, err := opts.Complete()
	if err != nil {
		return nil, err
	}
	return &Process{hooks: newHooks(o, "nginx"), opts: o}, nil
}

// Pid returns the pid of the nginx master, 0 when it is not running.
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Starts returns how many times nginx was started.
func (p *Process) Starts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts
}

// Signal sends sig to the nginx master (SIGHUP reloads).
func (p *Process) Signal(sig os.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return ErrNotRunning
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("%w: %w", ErrNotRunning, err)
	}
	return nil
}

// Start runs nginx until ctx ends, restarting it with backoff whenever it
// exits. When ctx ends it drains nginx (SIGQUIT, then SIGKILL after
// WorkerShutdownTimeout) and returns nil. It may be called only once.
func (p *Process) Start(ctx context.Context) error {
	if err := p.begin(); err != nil {
		return err
	}
	if _, err := os.Stat(p.opts.confPath()); err != nil {
		return fmt.Errorf("nginx.conf: %w", err)
	}
	for restarts := 1; ; restarts++ {
		began := time.Now()
		err := p.runOnce(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if time.Since(began) > stableRun {
			restarts = 1
		}
		backoff := restartBackoff.Delay(restarts)
		p.log.Error("nginx exited; restarting", "err", err, "backoff", backoff)
		if !retry.Sleep(ctx, nil, backoff) {
			return nil
		}
	}
}

// runOnce starts nginx, runs the hooks and waits for it to exit or for ctx
// to end (then it drains nginx).
func (p *Process) runOnce(ctx context.Context) error {
	cmd, err := p.spawn()
	if err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	runCtx, cancel := context.WithCancel(ctx)
	var hooksDone sync.WaitGroup
	hooksDone.Add(1)
	go func() {
		defer hooksDone.Done()
		p.afterStart(runCtx, cmd.Process.Pid)
	}()
	defer hooksDone.Wait()
	defer cancel()

	select {
	case err := <-exited:
		p.reap(cmd)
		return fmt.Errorf("nginx master %d: %w", cmd.Process.Pid, exitError(err))
	case <-ctx.Done():
		cancel()
		p.drain(cmd, exited)
		return ctx.Err()
	}
}

func exitError(err error) error {
	if err == nil {
		return errors.New("exited with status 0")
	}
	return err
}

// spawn starts the nginx master in its own process group, so that workers
// left behind by a killed master can be killed with it, forwards its stderr
// (the error log) to the logger and its stdout (the access log) to
// Options.Stdout.
func (p *Process) spawn() (*exec.Cmd, error) {
	// A master that was killed leaves its unix socket behind and a new one
	// could not bind it; the previous process group is gone by now.
	if err := os.Remove(p.opts.noEndpointsSocket()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove stale socket: %w", err)
	}
	out, copyOut, err := p.stdout()
	if err != nil {
		return nil, fmt.Errorf("start nginx: %w", err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start nginx: %w", err)
	}
	cmd := exec.Command(p.opts.NginxBinary, "-p", p.opts.Dir, "-c", p.opts.confPath(), "-e", "stderr")
	cmd.Dir = p.opts.Dir
	cmd.Stdout, cmd.Stderr = out, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	err = cmd.Start()
	pw.Close()
	if copyOut != nil {
		out.Close() // nginx holds its own copy
		go copyOut()
	}
	if err != nil {
		pr.Close()
		return nil, fmt.Errorf("start nginx: %w", err)
	}
	go p.forwardErrorLog(pr, cmd.Process.Pid)
	p.mu.Lock()
	p.cmd = cmd
	p.starts++
	p.mu.Unlock()
	p.log.Info("nginx started", "pid", cmd.Process.Pid, "conf", p.opts.confPath())
	return cmd, nil
}

// drain asks nginx to stop gracefully and kills it when the workers have
// not finished within WorkerShutdownTimeout.
func (p *Process) drain(cmd *exec.Cmd, exited <-chan error) {
	pid := cmd.Process.Pid
	p.log.Info("nginx stopping gracefully", "pid", pid)
	_ = cmd.Process.Signal(syscall.SIGQUIT)
	timer := time.NewTimer(p.opts.WorkerShutdownTimeout + killGrace)
	defer timer.Stop()
	select {
	case <-exited:
		p.log.Info("nginx stopped", "pid", pid)
	case <-timer.C:
		p.log.Warn("nginx did not stop in time; killing", "pid", pid)
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-exited
	}
	p.reap(cmd)
}

// childPIDs returns the pids of the children of pid (the workers of an
// nginx master).
func childPIDs(pid int) ([]int, error) {
	if pid == 0 {
		return nil, ErrNotRunning
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		p, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("children of %d: %w", pid, err)
		}
		pids = append(pids, p)
	}
	return pids, nil
}

// retired reports whether every worker in pids is gone or shutting down:
// nginx retitles a worker "worker process is shutting down" right before
// it closes its listening sockets.
func retired(pids []int) bool {
	for _, p := range pids {
		cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		if err == nil && len(cmd) > 0 && !bytes.Contains(cmd, []byte("shutting down")) {
			return false
		}
	}
	return true
}

// reap kills whatever is left in the master's process group (workers of a
// master that was killed) and forgets the process.
func (p *Process) reap(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	p.mu.Lock()
	if p.cmd == cmd {
		p.cmd = nil
	}
	p.mu.Unlock()
}
