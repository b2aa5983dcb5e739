package image

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
	"github.com/ingress-sync/ingress-sync/test/testkit/freeport"
	"github.com/ingress-sync/ingress-sync/test/testkit/netns"
	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
)

// The objects of the chart the test runs.
const (
	syncerName  = "ingress-sync-syncer"
	watcherName = "ingress-sync-watcher"
	natsName    = "nats"
	// The pods' names (POD_NAME): one replica of each Deployment.
	syncerPod  = syncerName + "-0"
	watcherPod = watcherName + "-0"
	// backendPort is the echo backend's, at netns.Addr(1): not a port of
	// nginx, which listens on every address of the namespace.
	backendPort = 9080
)

// startWait bounds a pod's start until ready and the first Ingress served.
const startWait = 2 * time.Minute

// TestImage runs the image as the chart's manifests run it and proves, in
// its subtests, what a user of the image relies on.
func TestImage(t *testing.T) {
	pm := newPodman(t)
	img := pm.image()
	c := renderChart(t)
	syncerDep, watcherDep := c.deployment(t, syncerName), c.deployment(t, watcherName)
	checkPodShape(t, syncerDep, watcherDep)

	cp := testenv.Start(t, testenv.WithAdvertiseAddress(netns.AdvertiseAddress))
	secrets := map[string]map[string]string{"nats-auth": {
		"watcher-password": randomHex(t), "syncer-password": randomHex(t)}}
	natsURL, natsPort := startNATS(t, c, secrets)
	c.apply(t, cp, secrets)
	backend, err := echo.Start("web", net.JoinHostPort(netns.Addr(1), strconv.Itoa(backendPort)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { backend.Close() })

	apiURL, err := url.Parse(cp.URL)
	if err != nil {
		t.Fatal(err)
	}
	apiPort, _ := strconv.Atoi(apiURL.Port())
	env := podEnv{
		namespace:  namespace,
		secrets:    secrets,
		serviceEnv: map[string]string{"KUBERNETES_SERVICE_HOST": apiURL.Hostname(), "KUBERNETES_SERVICE_PORT": apiURL.Port()},
		replace:    natsURLReplacer(t, c, natsURL),
	}
	watcherEnv := env
	watcherEnv.name = watcherPod
	watcherEnv.tokenDir = serviceAccountToken(t, cp, watcherDep.Spec.Template.Spec.ServiceAccountName)
	syncerEnv := env
	syncerEnv.name = syncerPod

	// The watcher first: it creates the streams the syncer reads.
	watcher := pm.startPod(watcherDep, watcherPod, watcherEnv, img, true, apiPort, natsPort)
	watcher.ready("watcher", startWait)
	syncer := pm.startPod(syncerDep, syncerPod, syncerEnv, img, false)
	syncer.ready("syncer", startWait)

	client := cp.Client(t)
	httpPort := containerPort(t, syncer.container("nginx"), "http")
	ns := "img"
	createIngress(t, client, ns, "web", "web.image.test", true)
	waitServed(t, httpPort, "web.image.test", startWait)

	t.Run("runs as the manifests say", func(t *testing.T) {
		checkProcesses(t, syncer, watcher, syncerDep)
	})
	t.Run("commands in the image", func(t *testing.T) {
		checkCommands(t, syncer, watcher, natsURL, secrets, ns)
	})
	t.Run("nginx outlives the syncer", func(t *testing.T) {
		master := nginxMaster(t, syncer)
		pm.must("kill", "--signal", "KILL", syncer.ctrs["syncer"])
		pm.must("wait", syncer.ctrs["syncer"])
		// While the syncer is down, nginx serves what it was given.
		for range 20 {
			get(t, httpPort, "web.image.test", "web")
			time.Sleep(100 * time.Millisecond)
		}
		if _, err := os.Stat("/proc/" + strconv.Itoa(master)); err != nil {
			t.Fatalf("nginx master %d is gone after the syncer was killed", master)
		}
		// The kubelet restarts the container alone; the new syncer adopts
		// the running nginx and drives it.
		pm.must("start", syncer.ctrs["syncer"])
		syncer.ready("syncer", startWait)
		createIngress(t, client, ns, "web2", "web2.image.test", false)
		waitServed(t, httpPort, "web2.image.test", startWait)
		get(t, httpPort, "web.image.test", "web")
		if got := nginxMaster(t, syncer); got != master {
			t.Errorf("nginx master %d after the restarted syncer, %d before: nginx was restarted", got, master)
		}
	})
}

// checkPodShape checks the settings the issue names in the rendered
// manifests, so that what the test proves is what they say: the syncer pod
// runs `syncer run --nginx-mode=external` and `syncer nginx` in one process
// namespace, sharing the nginx folder; every container runs as uid 10001,
// with a read-only root and no capability.
func checkPodShape(t *testing.T, syncerDep, watcherDep *appsv1.Deployment) {
	t.Helper()
	spec := syncerDep.Spec.Template.Spec
	if spec.ShareProcessNamespace == nil || !*spec.ShareProcessNamespace {
		t.Errorf("the syncer pod does not share its process namespace")
	}
	want := map[string][]string{"syncer": {"/usr/local/bin/syncer", "run"}, "nginx": {"/usr/local/bin/syncer", "nginx"}}
	mounts := map[string][]string{}
	for _, c := range spec.Containers {
		if w, ok := want[c.Name]; !ok || !slices.Equal(c.Command, w) {
			t.Errorf("syncer pod container %s runs %v", c.Name, c.Command)
		}
		for _, m := range c.VolumeMounts {
			mounts[m.Name] = append(mounts[m.Name], c.Name)
		}
	}
	if len(spec.Containers) != 2 {
		t.Errorf("the syncer pod has %d containers, want syncer and nginx", len(spec.Containers))
	}
	if !slices.Contains(spec.Containers[0].Args, "--nginx-mode=external") && !slices.Contains(spec.Containers[1].Args, "--nginx-mode=external") {
		t.Errorf("no container of the syncer pod runs --nginx-mode=external")
	}
	if got := mounts["nginx-dir"]; len(got) != 2 {
		t.Errorf("the emptyDir nginx-dir is mounted in %v, want both containers", got)
	}
	for _, d := range []*appsv1.Deployment{syncerDep, watcherDep} {
		ps := d.Spec.Template.Spec.SecurityContext
		for _, c := range d.Spec.Template.Spec.Containers {
			sc := c.SecurityContext
			uid := first(sc.RunAsUser, ps.RunAsUser)
			switch {
			case uid == nil || *uid != 10001:
				t.Errorf("%s/%s: runAsUser is not 10001", d.Name, c.Name)
			case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
				t.Errorf("%s/%s: the root file system is not read-only", d.Name, c.Name)
			case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
				t.Errorf("%s/%s: capabilities are not drop ALL", d.Name, c.Name)
			}
		}
	}
}

// checkProcesses checks the running processes from this machine's /proc:
// their user, capabilities, no_new_privs and seccomp, the read-only root,
// the shared process namespace of the syncer pod, and that nginx is the
// keeper's child, with the syncer's nginx.conf in the shared folder.
func checkProcesses(t *testing.T, syncer, watcher *pod, syncerDep *appsv1.Deployment) {
	keeper, sync, watch := syncer.pid("nginx"), syncer.pid("syncer"), watcher.pid("watcher")
	master := nginxMaster(t, syncer)
	procs := map[string]int{"syncer/nginx (syncer nginx)": keeper, "syncer/syncer (syncer run)": sync,
		"watcher/watcher": watch, "nginx master": master}
	for _, w := range children(master) {
		procs["nginx worker "+strconv.Itoa(w)] = w
	}
	for what, pid := range procs {
		st := procStatus(t, pid)
		for field, want := range map[string]string{
			"Uid": "10001\t10001\t10001\t10001", "Gid": "10001\t10001\t10001\t10001",
			"CapEff": "0000000000000000", "CapPrm": "0000000000000000", "CapBnd": "0000000000000000",
			"NoNewPrivs": "1", "Seccomp": "2",
		} {
			if st[field] != want {
				t.Errorf("%s (pid %d): %s %q, want %q", what, pid, field, st[field], want)
			}
		}
		if what != "nginx master" && !strings.HasPrefix(what, "nginx worker") {
			if !rootReadOnly(t, pid) {
				t.Errorf("%s (pid %d): / is not mounted read-only", what, pid)
			}
		}
	}
	if nsOf(t, keeper, "pid") != nsOf(t, sync, "pid") {
		t.Errorf("the syncer pod's containers are in different process namespaces")
	}
	if nsOf(t, keeper, "pid") == nsOf(t, watch, "pid") || nsOf(t, keeper, "pid") == nsOf(t, os.Getpid(), "pid") {
		t.Errorf("the syncer pod's process namespace is shared beyond the pod")
	}
	if nsOf(t, keeper, "mnt") == nsOf(t, sync, "mnt") {
		t.Errorf("the syncer pod's containers share a mount namespace: they are one container")
	}
	// The syncer wrote nginx.conf into the emptyDir; the keeper's nginx runs it.
	dir := syncer.volumes["nginx-dir"]
	if _, err := os.Stat(filepath.Join(dir, "nginx.conf")); err != nil {
		t.Errorf("no nginx.conf in the shared emptyDir nginx-dir: %v", err)
	}
	cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(master) + "/cmdline")
	if !strings.Contains(string(cmdline), "/var/lib/ingress-sync/nginx.conf") {
		t.Errorf("nginx master runs %q", bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
	}
	// The root is read-only for a write too, and the shared folder is not.
	if out, err := syncer.exec(nil, "syncer", "/usr/bin/touch", "/usr/local/bin/x"); err == nil ||
		!strings.Contains(err.Error(), "Read-only file system") {
		t.Errorf("writing under / from the syncer container: %v %s", err, out)
	}
	if _, err := syncer.exec(nil, "nginx", "/usr/bin/touch", "/var/lib/ingress-sync/probe"); err != nil {
		t.Errorf("the nginx container cannot write its emptyDir: %v", err)
	}
}

// rootReadOnly reports whether / is mounted read-only for pid.
func rootReadOnly(t *testing.T, pid int) bool {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) > 5 && f[4] == "/" {
			return slices.Contains(strings.Split(f[5], ","), "ro")
		}
	}
	return false
}

// nginxMaster is the host pid of the nginx master, the keeper's child.
func nginxMaster(t *testing.T, syncer *pod) int {
	t.Helper()
	for _, c := range children(syncer.pid("nginx")) {
		if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(c) + "/comm"); strings.TrimSpace(string(comm)) == "nginx" {
			return c
		}
	}
	t.Fatalf("the keeper (syncer nginx) has no nginx child\n%s", syncer.logs("nginx"))
	return 0
}

// checkCommands runs the debugging commands of docs/debugging.md inside the
// image, as a user runs them with kubectl exec: routes in the syncer
// container, replay there too (it must print the same routes), fleet in the
// watcher's (its NATS user reads the status stream), and decode on a
// payload of the stream.
func checkCommands(t *testing.T, syncer, watcher *pod, natsURL string, secrets map[string]map[string]string, ns string) {
	sc := syncer.container("syncer")
	statusPort := flagValue(t, sc, "status-port")
	live, err := syncer.exec(nil, "syncer", "/usr/local/bin/syncer", "routes", "--status-port="+statusPort)
	if err != nil || !strings.Contains(live, "web.image.test") {
		t.Fatalf("syncer routes: %v\n%s", err, live)
	}

	nc, err := nats.Connect(natsURL, nats.UserInfo("watcher", secrets["nats-auth"]["watcher-password"]))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	stream, err := js.Stream(ctx, flagValue(t, sc, "stream"))
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// replay with the flags the syncer runs with that replay has too.
	// -h prints the usage on stderr.
	_, usage, _ := syncer.p.run3(nil, "exec", syncer.ctrs["syncer"], "/usr/local/bin/syncer", "replay", "-h")
	if !strings.Contains(usage, "\n  -nats-url ") {
		t.Fatalf("syncer replay -h in the image: no -nats-url in\n%s", usage)
	}
	args := []string{"/usr/local/bin/syncer", "replay", "--at", strconv.FormatUint(info.State.LastSeq, 10), "--routes"}
	for _, a := range sc.Args {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if strings.Contains(usage, "\n  -"+name+" ") || strings.Contains(usage, "\n  -"+name+"\n") {
			args = append(args, expand(a, map[string]string{"NATS_URL": natsURL, "POD_NAMESPACE": namespace, "POD_NAME": syncerPod}))
		}
	}
	replayed, err := syncer.exec(nil, "syncer", args...)
	if err != nil {
		t.Errorf("syncer replay: %v", err)
	} else if replayed != live {
		t.Errorf("syncer routes in the image:\n%s\nsyncer replay --routes at %d in the image:\n%s", live, info.State.LastSeq, replayed)
	} else {
		t.Logf("syncer routes = syncer replay --at %d --routes (%d args of the syncer's):\n%s", info.State.LastSeq, len(args)-5, live)
	}

	fleet, err := watcher.exec(nil, "watcher", "/usr/local/bin/syncer", "fleet", "--nats-url="+natsURL,
		"--nats-user=watcher", "--json")
	if err != nil || !strings.Contains(fleet, syncerPod) {
		t.Errorf("syncer fleet in the watcher container: %v\n%s", err, fleet)
	}
	t.Logf("syncer fleet --json in the watcher container: %s", strings.TrimSpace(fleet))

	subject := flagValue(t, sc, "subject-prefix") + ".ingress." + ns + ".web"
	msg, err := stream.GetLastMsgForSubject(ctx, subject)
	if err != nil {
		t.Fatalf("last message on %s: %v", subject, err)
	}
	decoded, err := syncer.exec(bytes.NewReader(msg.Data), "syncer", "/usr/local/bin/syncer", "decode")
	var ev struct{ Kind, Namespace, Name string }
	if err != nil || json.Unmarshal([]byte(decoded), &ev) != nil || ev.Kind != "Ingress" || ev.Name != "web" || ev.Namespace != ns {
		t.Errorf("syncer decode: %v\n%s", err, decoded)
	}
}

// flagValue is the value of --name=value in c's args.
func flagValue(t *testing.T, c corev1.Container, name string) string {
	t.Helper()
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	t.Fatalf("%s has no --%s", c.Name, name)
	return ""
}

// startNATS runs nats-server (in this process) with the chart's ConfigMap
// nats-config and the environment of its StatefulSet's container, as one
// server on 127.0.0.1 and a port of freeport. It returns its URL and port.
func startNATS(t *testing.T, c *chart, secrets map[string]map[string]string) (string, int) {
	t.Helper()
	cm := object[corev1.ConfigMap](t, c, "ConfigMap", "nats-config")
	sts := object[appsv1.StatefulSet](t, c, "StatefulSet", natsName)
	dir := t.TempDir()
	for name, content := range cm.Data {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, ctr := range sts.Spec.Template.Spec.Containers {
		for _, e := range ctr.Env {
			v := e.Value
			switch {
			case e.ValueFrom == nil:
			case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
				v = natsName + "-0"
			case e.ValueFrom.SecretKeyRef != nil:
				v = secrets[e.ValueFrom.SecretKeyRef.Name][e.ValueFrom.SecretKeyRef.Key]
			default:
				t.Fatalf("nats env %s: a valueFrom the test does not give", e.Name)
			}
			t.Setenv(e.Name, v)
		}
	}
	opts, err := server.ProcessConfigFile(filepath.Join(dir, "nats.conf"))
	if err != nil {
		t.Fatalf("nats-config: %v", err)
	}
	ports, err := freeport.Ports(1)
	if err != nil {
		t.Fatal(err)
	}
	opts.Host, opts.Port = "127.0.0.1", ports[0]
	opts.HTTPHost, opts.HTTPPort = "", 0
	opts.StoreDir, opts.PidFile = t.TempDir(), filepath.Join(t.TempDir(), "nats.pid")
	opts.NoSigs, opts.NoLog = true, true
	if len(opts.Routes) > 0 || opts.Cluster.Port != 0 {
		t.Fatalf("nats-config with nats.replicas=1 configures a cluster")
	}
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	if !s.ReadyForConnections(30 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	return "nats://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])), ports[0]
}

// natsURLReplacer replaces NATS_URL, which names the chart's Service of
// NATS, by the test server's URL.
func natsURLReplacer(t *testing.T, c *chart, natsURL string) func(name, value string) string {
	svc := object[corev1.Service](t, c, "Service", natsName)
	return func(name, value string) string {
		if name != "NATS_URL" {
			return value
		}
		u, err := url.Parse(value)
		if err != nil || u.Scheme != "nats" || u.Hostname() != svc.Name || u.Port() != strconv.Itoa(int(svc.Spec.Ports[0].Port)) {
			t.Fatalf("NATS_URL %q does not name the Service %s: the test replaces only that", value, svc.Name)
		}
		return natsURL
	}
}

// serviceAccountToken writes what the kubelet mounts at
// /var/run/secrets/kubernetes.io/serviceaccount for the service account
// name of the release's namespace: a token, the API server's CA and the
// namespace.
func serviceAccountToken(t *testing.T, cp *testenv.ControlPlane, name string) string {
	t.Helper()
	cfg, err := cp.ServiceAccountConfig(t.Context(), namespace, name)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "serviceaccount")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for file, data := range map[string][]byte{"token": []byte(cfg.BearerToken), "ca.crt": cp.CAData, "namespace": []byte(namespace)} {
		if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// createIngress creates an Ingress of the chart's class for host, to the
// Service web of ns; withService also creates the Service and its
// EndpointSlice (the echo backend at netns.Addr(1):backendPort).
func createIngress(t *testing.T, client kubernetes.Interface, ns, name, host string, withService bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	opts := metav1.CreateOptions{}
	if withService {
		nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		if _, err := client.CoreV1().Namespaces().Create(ctx, nsObj, opts); err != nil {
			t.Fatal(err)
		}
		svc := fixtures.Service(ns, "web", backendPort)
		clean(&svc.ObjectMeta)
		if _, err := client.CoreV1().Services(ns).Create(ctx, svc, opts); err != nil {
			t.Fatal(err)
		}
		es := fixtures.EndpointSlice(ns, "web-1", "web", backendPort, netns.Addr(1))
		clean(&es.ObjectMeta)
		if _, err := client.DiscoveryV1().EndpointSlices(ns).Create(ctx, es, opts); err != nil {
			t.Fatal(err)
		}
	}
	ing := fixtures.Ingress(ns, name, fixtures.Class("ingress-sync"), fixtures.Rule(host, fixtures.Prefix("/", "web", backendPort)))
	clean(&ing.ObjectMeta)
	if _, err := client.NetworkingV1().Ingresses(ns).Create(ctx, ing, opts); err != nil {
		t.Fatal(err)
	}
}

// clean removes what the fixtures set and a create must not.
func clean(m *metav1.ObjectMeta) {
	m.UID, m.ResourceVersion, m.CreationTimestamp = "", "", metav1.Time{}
}

// waitServed waits until host answers from the backend web through nginx.
func waitServed(t *testing.T, port int, host string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	var last string
	for time.Now().Before(deadline) {
		r, err := echo.Get(t.Context(), plainHTTP, "http://127.0.0.1:"+strconv.Itoa(port)+"/", "Host", host)
		if err == nil && r.Status == http.StatusOK && r.Reply.Backend == "web" {
			return
		}
		last = strconv.Itoa(r.Status)
		if err != nil {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s not served through the image's nginx within %s (last: %s)", host, within, last)
}

// get fails the test unless host answers 200 from backend.
func get(t *testing.T, port int, host, backend string) {
	t.Helper()
	r, err := echo.Get(t.Context(), plainHTTP, "http://127.0.0.1:"+strconv.Itoa(port)+"/", "Host", host)
	if err != nil || r.Status != http.StatusOK || r.Reply.Backend != backend {
		t.Fatalf("GET %s: %v, status %d from %q, want 200 from %q", host, err, r.Status, r.Reply.Backend, backend)
	}
}

var plainHTTP = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
