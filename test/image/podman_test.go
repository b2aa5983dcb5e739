package image

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// envImage names the image under test; make test passes the one make image
// built.
const envImage = "INGRESS_SYNC_IMAGE"

const defaultImage = "localhost/ingress-sync:dev"

// podmanTimeout bounds one podman command.
const podmanTimeout = 2 * time.Minute

// podman runs podman with a configuration of the test's own
// (CONTAINERS_CONF): runc, and rlimits the machine can set
// (../shared/containers-here.md: crun and podman's default rlimits fail
// here). Names start with prefix, unique to the test process.
type podman struct {
	t      *testing.T
	conf   string
	prefix string
}

func newPodman(t *testing.T) *podman {
	t.Helper()
	if _, err := exec.LookPath("podman"); err != nil {
		t.Fatalf("podman is missing (%v): make image-deps installs it (as root)", err)
	}
	conf := filepath.Join(t.TempDir(), "containers.conf")
	err := os.WriteFile(conf, []byte(`[containers]
default_ulimits = ["nofile=20000:20000", "nproc=1024:1024"]
[engine]
runtime = "runc"
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	p := &podman{t: t, conf: conf, prefix: namePrefix + strconv.Itoa(os.Getpid()) + "-"}
	p.removeLeftovers()
	return p
}

// namePrefix starts the names of the pods and containers of the test,
// followed by the test process's pid.
const namePrefix = "ingress-sync-image-test-"

// removeLeftovers removes the pods and containers of test processes that
// are gone (killed before their cleanup ran).
func (p *podman) removeLeftovers() {
	for _, kind := range []string{"pod", "container"} {
		out, err := p.run(nil, kind, "ls", "--all", "--format", "{{.Name}}")
		if err != nil {
			continue
		}
		for _, name := range strings.Fields(out) {
			rest, ok := strings.CutPrefix(name, namePrefix)
			if !ok {
				continue
			}
			pid, _, _ := strings.Cut(rest, "-")
			if _, err := os.Stat("/proc/" + pid); err == nil {
				continue // a test that still runs
			}
			_, _ = p.run(nil, kind, "rm", "--force", "--time", "0", name)
		}
	}
}

// run runs podman and returns its stdout; the error carries its stderr.
func (p *podman) run(stdin io.Reader, args ...string) (string, error) {
	stdout, _, err := p.run3(stdin, args...)
	return stdout, err
}

// run3 runs podman and returns its stdout and stderr.
func (p *podman) run3(stdin io.Reader, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), podmanTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "podman", args...)
	cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+p.conf)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), stderr.String(), fmt.Errorf("podman %s: %w\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), stderr.String(), nil
}

// must runs podman or fails the test.
func (p *podman) must(args ...string) string {
	p.t.Helper()
	out, err := p.run(nil, args...)
	if err != nil {
		p.t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// image returns the image under test, failing when it is not in podman's
// store.
func (p *podman) image() string {
	p.t.Helper()
	img := os.Getenv(envImage)
	if img == "" {
		img = defaultImage
	}
	if _, err := p.run(nil, "image", "exists", img); err != nil {
		p.t.Fatalf("image %s is not in podman's store: run make image (make test builds it)", img)
	}
	return img
}

// pod is a running pod of a Deployment.
type pod struct {
	p    *podman
	name string // POD_NAME, and the podman pod's name after the prefix
	spec corev1.PodSpec
	// netns is the path of the pod's network namespace; "" when the pod
	// shares the test's.
	netns   string
	volumes map[string]string
	ctrs    map[string]string // container name → podman container
	http    *http.Client      // reaches the pod's 127.0.0.1
}

// startPod runs one pod of d: the pod (its infra process is the pause
// process, PID 1 of the shared process namespace when the spec shares
// one), then each container, in the order of the spec. ownNetwork gives
// the pod a network namespace of its own; before its containers start,
// forwards are made in it: 127.0.0.1:<port> there reaches 127.0.0.1:<port>
// of the test for each port given (the API server, NATS).
func (p *podman) startPod(d *appsv1.Deployment, name string, env podEnv, image string, ownNetwork bool, forwards ...int) *pod {
	t := p.t
	t.Helper()
	spec := d.Spec.Template.Spec
	po := &pod{p: p, name: name, spec: spec, ctrs: map[string]string{}, volumes: podVolumes(t, spec)}
	// A pod's containers share its network, IPC and UTS namespaces, and
	// its process namespace with shareProcessNamespace.
	share := "net,ipc,uts"
	if spec.ShareProcessNamespace != nil && *spec.ShareProcessNamespace {
		share += ",pid"
	}
	network := "host"
	if ownNetwork {
		network = "none"
	}
	pname := p.prefix + name
	p.must("pod", "create", "--name", pname, "--hostname", name, "--share", share, "--network", network)
	t.Cleanup(func() {
		if t.Failed() {
			po.dumpLogs()
		}
		if _, err := p.run(nil, "pod", "rm", "--force", "--time", "0", pname); err != nil {
			t.Errorf("remove pod %s: %v", pname, err)
		}
	})
	p.must("pod", "start", pname)
	po.http = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if ownNetwork {
		infra := p.must("pod", "inspect", "--format", "{{.InfraContainerID}}", pname)
		pid := p.must("inspect", "--format", "{{.State.Pid}}", infra)
		po.netns = "/proc/" + pid + "/ns/net"
		for _, port := range forwards {
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
			forward(t, po.netns, addr, addr)
		}
		po.http.Transport = &http.Transport{DisableKeepAlives: true,
			DialContext: func(_ context.Context, network, addr string) (net.Conn, error) { return dialIn(po.netns, addr) }}
	}
	grace := "30"
	if spec.TerminationGracePeriodSeconds != nil {
		grace = strconv.FormatInt(*spec.TerminationGracePeriodSeconds, 10)
	}
	for _, c := range spec.Containers {
		ctr := pname + "-" + c.Name
		args := append([]string{"run", "--detach", "--pod", pname, "--name", ctr, "--stop-timeout", grace},
			runArgs(t, spec, c, env, po.volumes, image)...)
		p.must(args...)
		po.ctrs[c.Name] = ctr
	}
	return po
}

func (po *pod) container(name string) corev1.Container {
	for _, c := range po.spec.Containers {
		if c.Name == name {
			return c
		}
	}
	po.p.t.Fatalf("pod %s has no container %s", po.name, name)
	return corev1.Container{}
}

// pid is the host's pid of the main process of container c.
func (po *pod) pid(c string) int {
	po.p.t.Helper()
	pid, err := strconv.Atoi(po.p.must("inspect", "--format", "{{.State.Pid}}", po.ctrs[c]))
	if err != nil || pid <= 0 {
		po.p.t.Fatalf("container %s: no pid (%v): is it running?\n%s", c, err, po.logs(c))
	}
	return pid
}

// exec runs argv in container c (as its user, with its environment) and
// returns its stdout.
func (po *pod) exec(stdin io.Reader, c string, argv ...string) (string, error) {
	args := []string{"exec"}
	if stdin != nil {
		args = append(args, "--interactive")
	}
	return po.p.run(stdin, append(append(args, po.ctrs[c]), argv...)...)
}

func (po *pod) logs(c string) string {
	out, err := po.p.run(nil, "logs", "--tail", "60", po.ctrs[c])
	if err != nil {
		return err.Error()
	}
	return out
}

func (po *pod) dumpLogs() {
	for _, c := range po.spec.Containers {
		// podman logs writes the container's stderr to its own stderr.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, _ := exec.CommandContext(ctx, "podman", "logs", "--tail", "80", po.ctrs[c.Name]).CombinedOutput()
		cancel()
		po.p.t.Logf("==== logs of %s/%s (tail)\n%s", po.name, c.Name, out)
	}
}

// ready polls the readiness probe of container c (an httpGet) until it
// answers 2xx.
func (po *pod) ready(c string, within time.Duration) {
	t := po.p.t
	t.Helper()
	ctr := po.container(c)
	pr := ctr.ReadinessProbe
	if pr == nil || pr.HTTPGet == nil {
		t.Fatalf("%s/%s has no httpGet readiness probe", po.name, c)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d%s", containerPort(t, ctr, pr.HTTPGet.Port.String()), pr.HTTPGet.Path)
	deadline := time.Now().Add(within)
	var last string
	for time.Now().Before(deadline) {
		resp, err := po.http.Get(url)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				return
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, body)
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s/%s not ready within %s (%s: %s)\n%s", po.name, c, within, url, last, po.logs(c))
}

// inNetns runs f on an OS thread in the network namespace at path, then
// moves the thread back to its own namespace before it runs anything else.
// Sockets made by f stay in that namespace. The thread must not end with
// f: a thread that ends kills the processes it started with Pdeathsig (the
// control plane's), and the main thread cannot end at all.
func inNetns(path string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		own, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer own.Close()
		target, err := os.Open(path)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("setns %s: %w", path, err)
			return
		}
		ferr := f()
		if err := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); err != nil {
			// Stuck in the other namespace: keep the thread locked, so
			// that it runs nothing else; it ends with this goroutine.
			errc <- fmt.Errorf("setns back from %s: %w", path, err)
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// dialIn connects to addr from the network namespace at path.
func dialIn(path, addr string) (net.Conn, error) {
	var c net.Conn
	err := inNetns(path, func() (err error) {
		c, err = net.DialTimeout("tcp", addr, 5*time.Second)
		return err
	})
	return c, err
}

// forward listens on listen in the network namespace at path and connects
// each connection to target in the test's namespace, until the test ends.
func forward(t *testing.T, path, listen, target string) {
	t.Helper()
	var l net.Listener
	if err := inNetns(path, func() (err error) {
		l, err = net.Listen("tcp", listen)
		return err
	}); err != nil {
		t.Fatalf("forward %s: %v", listen, err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				d, err := net.DialTimeout("tcp", target, 5*time.Second)
				if err != nil {
					return
				}
				defer d.Close()
				done := make(chan struct{}, 2)
				pipe := func(dst, src net.Conn) {
					_, _ = io.Copy(dst, src)
					if tc, ok := dst.(*net.TCPConn); ok {
						_ = tc.CloseWrite()
					}
					done <- struct{}{}
				}
				go pipe(d, c)
				go pipe(c, d)
				<-done
				<-done
			}()
		}
	}()
}

// procStatus returns the fields of /proc/<pid>/status.
func procStatus(t *testing.T, pid int) map[string]string {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// children returns the pids whose parent is pid.
func children(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		rest := string(data[bytes.LastIndexByte(data, ')')+1:])
		f := strings.Fields(rest)
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

// nsOf is the namespace link /proc/<pid>/ns/<kind>.
func nsOf(t *testing.T, pid int, kind string) string {
	t.Helper()
	l, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/" + kind)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
