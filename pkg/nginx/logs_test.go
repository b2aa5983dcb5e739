package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestRenderAccessLog: the access log goes to nginx's stdout unless the
// ConfigMap names /dev/stderr or a file, and is off when the ConfigMap or
// the syncer turns it off; the error log always goes to stderr. A path the
// model would refuse is refused by the renderer too.
func TestRenderAccessLog(t *testing.T) {
	tests := []struct {
		name    string
		n       func(*config.NginxSettings)
		off     bool // Options.DisableAccessLog
		want    []string
		notWant []string
		bad     bool
	}{
		{name: "stdout by default", want: []string{"\n    access_log /dev/stdout upstreaminfo;", "access_log /dev/stdout upstreaminfo if=$ingress_log;"}},
		{name: "stderr", n: func(n *config.NginxSettings) { n.AccessLogPath = "/dev/stderr" },
			want: []string{"\n    access_log /dev/stderr upstreaminfo;", "access_log /dev/stderr upstreaminfo if=$ingress_log;"}},
		{name: "a file", n: func(n *config.NginxSettings) { n.AccessLogPath = "/var/log/ingress/access.log" },
			want: []string{"\n    access_log /var/log/ingress/access.log upstreaminfo;", "access_log /var/log/ingress/access.log upstreaminfo if=$ingress_log;"}},
		{name: "off by the ConfigMap", n: func(n *config.NginxSettings) { n.DisableAccessLog = true },
			want: []string{"\n    access_log off;"}, notWant: []string{"upstreaminfo;", "if=$ingress_log"}},
		{name: "off by the syncer", off: true, n: func(n *config.NginxSettings) { n.AccessLogPath = "/tmp/a.log" },
			want: []string{"\n    access_log off;"}, notWant: []string{"/tmp/a.log"}},
		{name: "relative", n: func(n *config.NginxSettings) { n.AccessLogPath = "a.log" }, bad: true},
		{name: "directive", n: func(n *config.NginxSettings) { n.AccessLogPath = "/tmp/a.log; include /etc/passwd" }, bad: true},
		{name: "dot dot", n: func(n *config.NginxSettings) { n.AccessLogPath = "/tmp/../etc/passwd" }, bad: true},
		{name: "device", n: func(n *config.NginxSettings) { n.AccessLogPath = "/dev/sda" }, bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := goldenOptions()
			opts.DisableAccessLog = tc.off
			r, err := NewRenderer(opts)
			if err != nil {
				t.Fatal(err)
			}
			g := nginxGlobal(func(n *config.NginxSettings) {
				if tc.n != nil {
					tc.n(n)
				}
			})
			out, err := r.Render(&config.Configuration{Global: g})
			if tc.bad {
				if !errors.Is(err, ErrInvalidValue) {
					t.Fatalf("rendered an invalid access log path: %v\n%s", err, out)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			conf := string(out)
			for _, want := range append(tc.want, "\nerror_log stderr notice;") {
				if !strings.Contains(conf, want) {
					t.Errorf("nginx.conf lacks %q", want)
				}
			}
			for _, no := range tc.notWant {
				if strings.Contains(conf, no) {
					t.Errorf("nginx.conf has %q", no)
				}
			}
		})
	}
}

// TestNginxLevel: error log lines are logged at their own level, and only
// error and worse are kept for a failed reload's message.
func TestNginxLevel(t *testing.T) {
	tests := []struct {
		line  string
		level slog.Level
		isErr bool
	}{
		{"2026/12/01 10:00:00 [notice] 12#12: signal process started", slog.LevelInfo, false},
		{"2026/12/01 10:00:00 [info] 12#12: *1 client closed connection", slog.LevelInfo, false},
		{"2026/12/01 10:00:00 [debug] 12#12: x", slog.LevelDebug, false},
		{"2026/12/01 10:00:00 [warn] 12#12: x", slog.LevelWarn, false},
		{"2026/12/01 10:00:00 [error] 12#12: *3 lua entry thread aborted", slog.LevelError, true},
		{"2026/12/01 10:00:00 [emerg] 12#12: unknown directive", slog.LevelError, true},
		{"nginx: [alert] could not open error log file", slog.LevelError, true},
		{"some output", slog.LevelWarn, false},
	}
	for _, tc := range tests {
		level, isErr := nginxLevel(tc.line)
		if level != tc.level || isErr != tc.isErr {
			t.Errorf("nginxLevel(%q) = %v, %v; want %v, %v", tc.line, level, isErr, tc.level, tc.isErr)
		}
	}
	var e errorLog
	e.add("old")
	mark := e.mark()
	for i := range 20 {
		e.add(fmt.Sprint("line ", i))
	}
	if got, want := e.since(mark), "line 15 | line 16 | line 17 | line 18 | line 19"; got != want {
		t.Errorf("since = %q; want %q", got, want)
	}
	if got := e.since(e.mark()); got != "" {
		t.Errorf("since the last mark = %q; want nothing", got)
	}
}

// TestAccessLogStdout runs a real nginx whose stdout is a writer of this
// test (as the syncer passes on its own stdout): a request shows up there in
// the ConfigMap's format, as JSON with log-format-escape-json; with
// disable-access-log nothing is written; access-log-path writes the file
// instead; nginx's error log reaches the Logger ("nginx error log").
func TestAccessLogStdout(t *testing.T) {
	e := startEcho(t, "web")
	format := `{"host": "$host", "uri": "$request_uri", "status": $status, "agent": "$http_user_agent"}`
	cfg := hostTable(1, endpointOf(e))
	cfg.Global.Nginx = config.DefaultGlobal().Nginx
	cfg.Global.Nginx.LogFormatUpstream, cfg.Global.Nginx.LogFormatEscapeJSON = format, true
	stdout := &syncBuffer{}
	h := startNginx(t, cfg, func(o *Options) { o.Stdout = stdout })
	host := tableHost(0)
	ctx := context.Background()

	checkServed(t, h, "http://"+host+"/first", 200, "web")
	h.mustGet("http://"+host+"/agent", "User-Agent", `a"b`)
	want := `{"host": "` + host + `", "uri": "/agent", "status": 200, "agent": "a\"b"}` + "\n"
	waitFor(t, "the access log line on stdout", func() bool { return strings.Contains(stdout.String(), want) })

	off := *cfg
	off.Global.Nginx.DisableAccessLog, off.Checksum = true, "off"
	if err := h.reload(ctx, &off); err != nil {
		t.Fatal(err)
	}
	before := stdout.String()
	checkServed(t, h, "http://"+host+"/second", 200, "web")
	file := filepath.Join(h.opts.Dir, "requests.log")
	toFile := *cfg
	toFile.Global.Nginx.AccessLogPath, toFile.Checksum = file, "file"
	if err := h.reload(ctx, &toFile); err != nil { // the request above is logged by now, if at all
		t.Fatal(err)
	}
	if after := stdout.String(); after != before {
		t.Errorf("with disable-access-log nginx wrote %q", strings.TrimPrefix(after, before))
	}
	checkServed(t, h, "http://"+host+"/third", 200, "web")
	waitFor(t, "the access log line in "+file, func() bool {
		data, _ := os.ReadFile(file)
		return bytes.Contains(data, []byte(`"uri": "/third"`))
	})
	if strings.Contains(stdout.String(), "/third") {
		t.Errorf("access-log-path %s: the request went to stdout too", file)
	}
	logs, _ := os.ReadFile(h.opts.errorLogPath())
	if !bytes.Contains(logs, []byte(`msg="nginx error log"`)) || !bytes.Contains(logs, []byte("[notice]")) {
		t.Errorf("nginx's error log did not reach the Logger:\n%s", logs)
	}
}

// syncBuffer is a bytes.Buffer safe for the copy of nginx's stdout and the
// test to use at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
