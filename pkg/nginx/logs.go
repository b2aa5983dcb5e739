package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"bufio"
	"context"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"
)

// Logs: nginx's error log goes to its stderr (error_log stderr), which
// Process reads and logs line by line through the Logger; the access log
// goes to its stdout (Options.Stdout) unless the ConfigMap names a file.

const (
	maxAccessLogPath = 256
	// recentErrors is how many error-level lines errorLog keeps for the
	// message of a failed reload; at most reportedErrors are reported.
	recentErrors   = 16
	reportedErrors = 5
)

// accessLogFileRe is an absolute path of plain names (model's
// parseAccessLogPath checked it first; this is the renderer's own check).
var accessLogFileRe = regexp.MustCompile(`^(/[A-Za-z0-9._-]+)+$`)

// accessLogPath validates the access log destination of the ConfigMap: ""
// is nginx's stdout.
func accessLogPath(p string) (string, error) {
	switch p {
	case "":
		return config.AccessLogStdout, nil
	case config.AccessLogStderr:
		return p, nil
	}
	if len(p) > maxAccessLogPath || !accessLogFileRe.MatchString(p) || strings.Contains(p+"/", "/../") ||
		strings.Contains(p+"/", "/./") || strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/sys/") {
		return "", invalid("access log path", p)
	}
	return p, nil
}

// setAccessLog sets the access log of v from the ConfigMap's settings.
func (v *view) setAccessLog(n *config.NginxSettings) error {
	v.AccessLog = v.AccessLog && !n.DisableAccessLog
	p, err := accessLogPath(n.AccessLogPath)
	v.AccessLogPath = p
	return err
}

// errorLog keeps the recent error-level lines of nginx's error log, for
// the message of a failed reload.
type errorLog struct {
	mu    sync.Mutex
	lines []string
	seen  uint64 // error-level lines ever seen
}

// mark returns a position; since(mark) returns the lines after it.
func (e *errorLog) mark() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.seen
}

func (e *errorLog) add(line string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seen++
	e.lines = append(e.lines, line)
	if len(e.lines) > recentErrors {
		e.lines = e.lines[len(e.lines)-recentErrors:]
	}
}

// since returns the last reportedErrors error-level lines after mark,
// joined by " | ".
func (e *errorLog) since(mark uint64) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := min(int(e.seen-mark), len(e.lines), reportedErrors)
	return strings.Join(e.lines[len(e.lines)-n:], " | ")
}

// errorMark and errorsSince read the error log of s when it is a Process.
func errorMark(s Signaler) uint64 {
	if p, ok := s.(*Process); ok {
		return p.errors.mark()
	}
	return 0
}

func errorsSince(s Signaler, mark uint64) string {
	if p, ok := s.(*Process); ok {
		return p.errors.since(mark)
	}
	return ""
}

// nginxLevel returns the level of an error log line
// ("2026/12/01 10:00:00 [error] 12#0: ...") as a slog level, and whether
// the line is an error; a line without one (startup output) is a warning.
func nginxLevel(line string) (slog.Level, bool) {
	i := strings.Index(line, " [")
	j := strings.Index(line, "] ")
	if i < 0 || j < i {
		return slog.LevelWarn, false
	}
	switch line[i+2 : j] {
	case "debug":
		return slog.LevelDebug, false
	case "info", "notice":
		return slog.LevelInfo, false
	case "warn":
		return slog.LevelWarn, false
	case "error", "crit", "alert", "emerg":
		return slog.LevelError, true
	}
	return slog.LevelWarn, false
}

// forwardErrorLog logs every line of r (nginx's stderr) at its level and
// keeps the error-level ones.
func (p *Process) forwardErrorLog(r io.ReadCloser, pid int) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		level, isError := nginxLevel(line)
		if isError {
			p.errors.add(strings.TrimSpace(line))
		}
		p.log.Log(context.Background(), level, "nginx error log", "pid", pid, "line", line)
	}
}

// stdout returns the file nginx's stdout is, and for a writer that is no
// file, the copy that feeds it (run it after the start; it ends when every
// nginx process has closed the pipe).
func (p *Process) stdout() (f *os.File, copyOut func(), err error) {
	w := p.opts.Stdout
	if w == nil {
		w = os.Stdout
	}
	if f, ok := w.(*os.File); ok {
		return f, nil, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	return pw, func() {
		defer pr.Close()
		_, _ = io.Copy(w, pr)
	}, nil
}
