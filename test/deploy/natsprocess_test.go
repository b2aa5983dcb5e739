package deploy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// natsModule is the module whose nats-server the image tag pins too (see
// TestNATSImageMatchesModule).
const natsModule = "github.com/nats-io/nats-server/v2"

// processStopGrace is how long a server process gets between SIGTERM and
// SIGKILL at the end of a test.
const processStopGrace = 10 * time.Second

// buildNATSServer builds the nats-server binary of the module version in
// go.mod, once per test binary, into a folder removed at exit.
var buildNATSServer = sync.OnceValues(func() (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("go toolchain for building nats-server: %w", err)
	}
	dir, err := os.MkdirTemp("", "ingress-sync-deploy-nats-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "nats-server")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, goBin, "build", "-o", bin, natsModule).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", natsModule, err, out)
	}
	return bin, nil
})

// natsProcess is one nats-server process run as the pod runs it:
// nats-server --config nats.conf, the ConfigMap's files beside it with the
// addresses and paths rewritten for this machine.
type natsProcess struct {
	name, bin, conf, pidFile string
	env                      []string
	client, http, route      int
	cmd                      *exec.Cmd
	done                     chan struct{}
}

// processCluster is three natsProcesses.
type processCluster struct {
	nodes []*natsProcess
}

func startProcessCluster(t *testing.T, files map[string]string, pw natsPasswords) *processCluster {
	bin, err := buildNATSServer()
	if err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 3*clusterSize)
	c := &processCluster{}
	for i := range clusterSize {
		n := &natsProcess{name: fmt.Sprintf("nats-%d", i), bin: bin,
			client: ports[3*i], http: ports[3*i+1], route: ports[3*i+2]}
		n.env = []string{"SERVER_NAME=" + n.name, "WATCHER_PASSWORD=" + pw.watcher, "SYNCER_PASSWORD=" + pw.syncer}
		c.nodes = append(c.nodes, n)
	}
	for _, n := range c.nodes {
		n.conf, n.pidFile = n.writeConfig(t, files, c)
	}
	for _, n := range c.nodes {
		n.start(t)
	}
	for _, n := range c.nodes {
		n.waitHealthy(t)
	}
	return c
}

// writeConfig rewrites every address and path of the ConfigMap's files for
// this node; each rewritten string must be present, so the test notices
// when the configuration changes under it.
func (n *natsProcess) writeConfig(t *testing.T, files map[string]string, c *processCluster) (conf, pidFile string) {
	dir := t.TempDir()
	pidFile = filepath.Join(dir, "nats.pid")
	replace := []string{
		"listen: 0.0.0.0:4222", "listen: 127.0.0.1:" + strconv.Itoa(n.client),
		"http: 0.0.0.0:8222", "http: 127.0.0.1:" + strconv.Itoa(n.http),
		"listen: 0.0.0.0:6222", "listen: 127.0.0.1:" + strconv.Itoa(n.route),
		"store_dir: /data/jetstream", fmt.Sprintf("store_dir: %q", filepath.Join(dir, "jetstream")),
		"pid_file: " + natsPidFile, fmt.Sprintf("pid_file: %q", pidFile),
	}
	for i, peer := range c.nodes {
		replace = append(replace, fmt.Sprintf("nats-%d.nats-headless:6222", i), "127.0.0.1:"+strconv.Itoa(peer.route))
	}
	all := strings.Join(mapValues(files), "\n")
	for i := 0; i < len(replace); i += 2 {
		if !strings.Contains(all, replace[i]) {
			t.Fatalf("the NATS configuration no longer has %q", replace[i])
		}
	}
	return writeNATSConfig(t, files, replace...), pidFile
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// start runs the process; its output goes to a log file next to the
// configuration. The process gets SIGKILL should the test binary die.
func (n *natsProcess) start(t *testing.T) {
	logFile, err := os.OpenFile(filepath.Join(filepath.Dir(n.conf), "nats.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(n.bin, "--config", n.conf)
	cmd.Env = append(os.Environ(), n.env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("start %s: %v", n.name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(done)
	}()
	n.cmd, n.done = cmd, done
	t.Cleanup(func() { n.terminate(t) })
}

// waitHealthy polls the readiness probe of the StatefulSet and the client
// port (the probe can answer before the client listener is up), bounded.
func (n *natsProcess) waitHealthy(t *testing.T) {
	url := fmt.Sprintf("http://127.0.0.1:%d/healthz?js-enabled-only=true", n.http)
	deadline := time.Now().Add(natsStartTimeout)
	for {
		if probeOK(t, url) && dialOK("127.0.0.1:"+strconv.Itoa(n.client)) {
			return
		}
		select {
		case <-n.done:
			log, _ := os.ReadFile(filepath.Join(filepath.Dir(n.conf), "nats.log"))
			t.Fatalf("%s exited:\n%s", n.name, tail(log, 2048))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not healthy at %s within %s", n.name, url, natsStartTimeout)
		}
		time.Sleep(retryPause)
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func dialOK(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, callTimeout)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

func probeOK(t *testing.T, url string) bool {
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// exited waits, bounded, for the process to end by itself.
func (n *natsProcess) exited(timeout time.Duration) bool {
	select {
	case <-n.done:
		return true
	case <-time.After(timeout):
		return false
	}
}

// terminate sends SIGTERM, then SIGKILL after processStopGrace.
func (n *natsProcess) terminate(t *testing.T) {
	select {
	case <-n.done:
		return
	default:
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	if !n.exited(processStopGrace) {
		t.Errorf("%s ignored SIGTERM for %s; killing it", n.name, processStopGrace)
		_ = n.cmd.Process.Kill()
		<-n.done
	}
}

func (c *processCluster) node(t *testing.T, name string) *natsProcess {
	for _, n := range c.nodes {
		if n.name == name {
			return n
		}
	}
	t.Fatalf("no server %q", name)
	return nil
}

func (c *processCluster) urls() string {
	var urls []string
	for _, n := range c.nodes {
		urls = append(urls, "nats://127.0.0.1:"+strconv.Itoa(n.client))
	}
	return strings.Join(urls, ",")
}

// stop kills the server with SIGKILL: a crash, no leadership handed over.
func (c *processCluster) stop(t *testing.T, name string) {
	n := c.node(t, name)
	if err := n.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-n.done
}

func (c *processCluster) restart(t *testing.T, name string) {
	n := c.node(t, name)
	n.start(t)
	n.waitHealthy(t)
}

// TestNATSProcessClusterCrash runs the leader-loss scenario on three
// nats-server processes started exactly like the pods (nats-server
// --config, the ConfigMap's files, passwords in the environment), the
// stream leader killed with SIGKILL. Then the preStop command of the
// StatefulSet puts a server into lame duck mode through its pid file, and
// its clients are told to move.
func TestNATSProcessClusterCrash(t *testing.T) {
	objs := render(t, "base")
	pw := newPasswords(t)
	c := startProcessCluster(t, natsConfigFiles(t, objs), pw)
	leaderLoss(t, c, pw)
	t.Run("preStop puts the server into lame duck mode", func(t *testing.T) {
		n := c.nodes[0]
		ldm := make(chan struct{}, 1)
		if _, err := connectAs(t, "nats://127.0.0.1:"+strconv.Itoa(n.client), "syncer", pw.syncer,
			nats.LameDuckModeHandler(func(*nats.Conn) { ldm <- struct{}{} })); err != nil {
			t.Fatal(err)
		}
		pre := container(t, workloadNamed(t, objs, natsName), "nats").Lifecycle.PreStop.Exec.Command
		args := strings.Split(strings.ReplaceAll(strings.Join(pre[1:], " "), natsPidFile, n.pidFile), " ")
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		defer cancel()
		if out, err := exec.CommandContext(ctx, n.bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", pre[0], args, err, out)
		}
		select {
		case <-ldm:
		case <-time.After(natsStartTimeout):
			t.Fatalf("clients of %s were not told of lame duck mode within %s", n.name, natsStartTimeout)
		}
		// It would leave by itself after lame_duck_duration (30s at least).
		c.stop(t, n.name)
	})
}

// TestNATSImageMatchesModule: the StatefulSet runs the nats-server version
// that go.mod pins, the one every NATS test here runs, and its termination
// grace period outlasts the lame duck mode of its configuration.
func TestNATSImageMatchesModule(t *testing.T) {
	version := requiredVersion(t, natsModule)
	pki := writeTestPKI(t)
	for _, dir := range kustomizations {
		objs := render(t, dir)
		w := workloadNamed(t, objs, natsName)
		if img, want := container(t, w, "nats").Image, "nats:"+version+"-alpine"; img != want {
			t.Errorf("%s: image %s, want %s (go.mod has %s %s)", dir, img, want, natsModule, version)
		}
		setNATSEnv(t, "nats-0", newPasswords(t))
		opts := loadNATSOptions(t, writeNATSConfig(t, natsConfigFiles(t, objs), "/etc/nats-tls/", pki+"/"))
		ldm := opts.LameDuckDuration + opts.LameDuckGracePeriod
		if grace := time.Duration(deref(w.Template.Spec.TerminationGracePeriodSeconds, 30)) * time.Second; grace <= ldm {
			t.Errorf("%s: terminationGracePeriodSeconds %s, lame duck mode takes %s", dir, grace, ldm)
		}
	}
}

// requiredVersion reads the version of module from the repository's go.mod,
// without the leading v.
func requiredVersion(t *testing.T, module string) string {
	data, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		fields := strings.Fields(line)
		if len(fields) >= 2 && fields[0] == module {
			return strings.TrimPrefix(fields[1], "v")
		}
	}
	t.Fatalf("go.mod does not require %s", module)
	return ""
}
