package proc

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStartStopAndLog(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name    string
		script  string
		killed  bool
		logWant string
	}{
		{"exits on SIGTERM", "echo started $GREETING; exec sleep 30", false, "started hello"},
		{"ignores SIGTERM and is killed", "trap '' TERM; echo stubborn; while :; do sleep 0.05; done", true, "stubborn"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(dir, tc.name+".log")
			p, err := Start(tc.name, "/bin/sh", log, []string{"-c", tc.script}, []string{"GREETING=hello"})
			if err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for !strings.Contains(p.LogTail(100), tc.logWant) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if got := p.LogTail(100); got != tc.logWant {
				t.Fatalf("log %q, want %q", got, tc.logWant)
			}
			err = p.Stop(time.Duration(200*(i+1)) * time.Millisecond)
			if killed := errors.Is(err, ErrKilled); killed != tc.killed {
				t.Fatalf("Stop: %v, want killed=%v", err, tc.killed)
			}
			if done, _ := p.Exited(); !done {
				t.Fatal("process still running after Stop")
			}
		})
	}
}
