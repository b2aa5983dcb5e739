package deploy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ingress-sync/ingress-sync/test/testkit/natscluster"
)

// natsModule is the module whose nats-server the image tag pins too (see
// TestNATSImageMatchesModule).
const natsModule = natscluster.Module

// buildNATSServer builds the nats-server binary of the module version in
// go.mod, once per test binary, into a folder removed at exit.
var buildNATSServer = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "ingress-sync-deploy-nats-")
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return natscluster.Build(ctx, dir)
})

// processCluster is three nats-server processes run as the pods run them
// (test/testkit/natscluster), for the leader-loss scenario.
type processCluster struct {
	*natscluster.Cluster
}

func startProcessCluster(t *testing.T, files map[string]string, pw natsPasswords) *processCluster {
	bin, err := buildNATSServer()
	if err != nil {
		t.Fatal(err)
	}
	if natscluster.PidFile != natsPidFile {
		t.Fatalf("natscluster rewrites pid file %s, nats.conf has %s", natscluster.PidFile, natsPidFile)
	}
	c, err := natscluster.Start(t.Context(), natscluster.Options{Bin: bin, Dir: t.TempDir(), Files: files,
		Env: []string{"WATCHER_PASSWORD=" + pw.watcher, "SYNCER_PASSWORD=" + pw.syncer}, StartTimeout: natsStartTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop the NATS cluster: %v", err)
		}
	})
	return &processCluster{c}
}

func (c *processCluster) node(t *testing.T, name string) *natscluster.Node {
	n, err := c.Node(name)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (c *processCluster) urls() string { return c.URLs() }

// stop kills the server with SIGKILL: a crash, no leadership handed over.
func (c *processCluster) stop(t *testing.T, name string) {
	if err := c.Kill(name); err != nil {
		t.Fatal(err)
	}
}

func (c *processCluster) restart(t *testing.T, name string) {
	if err := c.Restart(t.Context(), name); err != nil {
		t.Fatal(err)
	}
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
		n := c.Nodes[0]
		ldm := make(chan struct{}, 1)
		if _, err := connectAs(t, n.URL(), "syncer", pw.syncer,
			nats.LameDuckModeHandler(func(*nats.Conn) { ldm <- struct{}{} })); err != nil {
			t.Fatal(err)
		}
		pre := container(t, workloadNamed(t, objs, natsName), "nats").Lifecycle.PreStop.Exec.Command
		args := strings.Split(strings.ReplaceAll(strings.Join(pre[1:], " "), natsPidFile, n.PidFile), " ")
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		defer cancel()
		if out, err := exec.CommandContext(ctx, n.Bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", pre[0], args, err, out)
		}
		select {
		case <-ldm:
		case <-time.After(natsStartTimeout):
			t.Fatalf("clients of %s were not told of lame duck mode within %s", n.Name, natsStartTimeout)
		}
		// It would leave by itself after lame_duck_duration (30s at least).
		c.stop(t, n.Name)
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
