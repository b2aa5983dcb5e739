package nginx

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ingress-sync/ingress-sync/internal/retry"
)

// Runner is what runs nginx for an Applier: Process starts it as a child,
// Attached follows one that another process runs.
type Runner interface {
	Signaler
	// OnStart registers a hook run after every new nginx master; register
	// before Start.
	OnStart(h StartHook)
	// Ready is closed after the first master whose hooks all succeeded.
	Ready() <-chan struct{}
	// Start runs until ctx ends.
	Start(ctx context.Context) error
}

var (
	_ Runner = (*Process)(nil)
	_ Runner = (*Attached)(nil)
)

// attachPoll paces Attached's look at the pid file and the master.
var attachPoll = retry.Backoff{Base: 100 * time.Millisecond, Max: 100 * time.Millisecond}

// Attached follows an nginx master that another process runs in the same
// directory: `syncer nginx`, in another container of the pod that shares
// its process namespace. It finds the master through nginx's pid file,
// signals it for reloads and runs the start hooks whenever a new master
// appears: the first one it finds (nginx that outlived a previous syncer,
// or one the keeper just started) and every one after it. It never starts
// or stops nginx, so nginx keeps serving through a crash of this process.
type Attached struct {
	hooks
	opts Options

	mu  sync.Mutex
	pid int
}

// NewAttached validates opts.
func NewAttached(opts Options) (*Attached, error) {
	o, err := opts.Complete()
	if err != nil {
		return nil, err
	}
	return &Attached{hooks: newHooks(o, "nginx-attached"), opts: o}, nil
}

// Pid returns the pid of the nginx master followed, 0 when there is none.
func (a *Attached) Pid() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pid
}

// Signal sends sig to the nginx master (SIGHUP reloads).
func (a *Attached) Signal(sig os.Signal) error {
	pid := a.Pid()
	if pid == 0 {
		return ErrNotRunning
	}
	s, ok := sig.(syscall.Signal)
	if !ok {
		return fmt.Errorf("%w: signal %v", ErrNotRunning, sig)
	}
	if err := syscall.Kill(pid, s); err != nil {
		return fmt.Errorf("%w: master %d: %w", ErrNotRunning, pid, err)
	}
	return nil
}

// Start follows the masters that appear in the pid file until ctx ends,
// and leaves nginx running when it does. It may be called only once.
func (a *Attached) Start(ctx context.Context) error {
	if err := a.begin(); err != nil {
		return err
	}
	waiting := false
	for ctx.Err() == nil {
		pid := a.master()
		if pid == 0 {
			if !waiting {
				a.log.Info("waiting for nginx", "pid-file", a.opts.pidPath())
				waiting = true
			}
			retry.Sleep(ctx, nil, attachPoll.Delay(1))
			continue
		}
		waiting = false
		a.follow(ctx, pid)
	}
	return nil
}

// follow runs the hooks for the master pid (again after a failure, paced)
// and returns once pid is no longer the master or ctx ends.
func (a *Attached) follow(ctx context.Context, pid int) {
	a.setPid(pid)
	defer a.setPid(0)
	a.log.Info("nginx master found", "pid", pid)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for attempt := 1; !a.afterStart(runCtx, pid); attempt++ {
			if !retry.Sleep(runCtx, nil, restartBackoff.Delay(attempt)) {
				return
			}
		}
	}()
	retry.Poll(ctx, attachPoll, func() bool { return a.master() != pid })
	cancel()
	<-done
	if ctx.Err() == nil {
		a.log.Warn("nginx master gone", "pid", pid)
	}
}

func (a *Attached) setPid(pid int) {
	a.mu.Lock()
	a.pid = pid
	a.mu.Unlock()
}

// master returns the pid in nginx's pid file when that process is an
// nginx master running this directory's nginx.conf, and 0 otherwise (no
// file, a stale pid, a pid reused by another process).
func (a *Attached) master() int {
	data, err := os.ReadFile(a.opts.pidPath())
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 1 {
		return 0
	}
	if !isMaster(pid, a.opts.confPath()) {
		return 0
	}
	return pid
}

// isMaster reports whether pid runs (it is no zombie) with the title of an
// nginx master started with conf, and is not a worker of one.
func isMaster(pid int, conf string) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' {
		return false
	}
	// A worker just forked still has its master's title until it sets its
	// own: a process whose parent is that master is a worker.
	fields := strings.Fields(string(stat[i+2:]))
	if len(fields) < 2 {
		return false
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil || masterTitle(ppid, conf) {
		return false
	}
	return masterTitle(pid, conf)
}

// masterTitle reports whether pid's title is that of the nginx master of
// configuration conf.
func masterTitle(pid int, conf string) bool {
	title, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	return bytes.HasPrefix(title, []byte("nginx: master process")) && bytes.Contains(title, []byte(conf))
}
