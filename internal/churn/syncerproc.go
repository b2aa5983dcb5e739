package churn

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ingress-sync/ingress-sync/internal/proc"
	"github.com/ingress-sync/ingress-sync/internal/world"
)

// syncerProcess is a syncer binary with its nginx, for the stream-only
// scenarios (the World runs its own for the Kubernetes one).
type syncerProcess struct {
	name                  string
	dir                   string // nginx's
	proc                  *proc.Process
	httpPort, metricsPort int
}

// syncerArgs are what a stream scenario's syncer runs with.
type syncerArgs struct {
	bin, dir, name          string
	natsURL, stream, prefix string
	extra                   []string
}

// startSyncer starts the syncer binary (its nginx under dir/<name>),
// logging to dir/<name>.log.
func startSyncer(a syncerArgs) (*syncerProcess, error) {
	ports, err := world.FreePorts(4)
	if err != nil {
		return nil, err
	}
	ngxDir := filepath.Join(a.dir, a.name)
	if err := os.MkdirAll(ngxDir, 0o755); err != nil {
		return nil, err
	}
	s := &syncerProcess{name: a.name, dir: ngxDir, httpPort: ports[0], metricsPort: ports[3]}
	args := []string{"run",
		"--nats-url", a.natsURL, "--stream", a.stream, "--subject-prefix", a.prefix, "--pod-name", a.name,
		"--controller-class", world.ControllerClass, "--ingress-class", world.IngressClass,
		"--listen-address", "127.0.0.1", "--http-port", strconv.Itoa(ports[0]),
		"--https-port", strconv.Itoa(ports[1]), "--status-port", strconv.Itoa(ports[2]),
		"--metrics-addr", "127.0.0.1:" + strconv.Itoa(ports[3]), "--nginx-dir", ngxDir,
		"--worker-processes", "2", "--worker-shutdown-timeout", "5s", "--log-level", "warn",
	}
	args = append(args, a.extra...)
	s.proc, err = proc.Start(a.name, a.bin, filepath.Join(a.dir, a.name+".log"), args, nil)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *syncerProcess) metricsURL() string {
	return "http://127.0.0.1:" + strconv.Itoa(s.metricsPort) + "/metrics"
}

// waitReady polls /readyz every 10ms until it answers 200, the process
// exits or ctx ends.
func (s *syncerProcess) waitReady(ctx context.Context) error {
	client := &http.Client{Timeout: 2 * time.Second}
	url := "http://127.0.0.1:" + strconv.Itoa(s.metricsPort) + "/readyz"
	for {
		if done, err := s.proc.Exited(); done {
			return fmt.Errorf("churn: %s exited (%v):\n%s", s.name, err, s.proc.LogTail(4000))
		}
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("churn: %s not ready: %w\n%s", s.name, ctx.Err(), s.proc.LogTail(4000))
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (s *syncerProcess) stop() error { return s.proc.Stop(20 * time.Second) }
