// Package proc runs the child processes of tests and of the demo (etcd,
// kube-apiserver, watcher, syncers) with their output in a log file, and
// stops them with SIGTERM, then SIGKILL after a grace period.
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// DefaultGrace is how long Stop waits between SIGTERM and SIGKILL.
const DefaultGrace = 10 * time.Second

// ErrKilled is returned by Stop when the process ignored SIGTERM.
var ErrKilled = errors.New("proc: killed after the grace period")

// Process is one running child process.
type Process struct {
	Name    string
	LogPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited
	err     error         // exit status, valid after done
}

// Start runs bin with args and env added to the environment; stdout and
// stderr are appended to logPath. The child gets SIGKILL if this process
// dies without stopping it.
func Start(name, bin, logPath string, args, env []string) (*Process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%s log: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has stopped, and its exit error.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Stop sends SIGTERM, waits up to grace, then kills and waits. It returns an
// error wrapping ErrKilled when the process had to be killed.
func (p *Process) Stop(grace time.Duration) error {
	if p == nil {
		return nil
	}
	if done, _ := p.Exited(); done {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.done:
		return nil
	case <-timer.C:
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill %s: %w", p.Name, err)
	}
	<-p.done
	return fmt.Errorf("%s: %w (%s)", p.Name, ErrKilled, grace)
}

// LogTail returns the last n bytes of the process log, for error messages.
func (p *Process) LogTail(n int64) string {
	f, err := os.Open(p.LogPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > n {
		_, _ = f.Seek(st.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(bytes.TrimSpace(b))
}
