//go:build conformance

package conformance

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ingress-sync/ingress-sync/pkg/gateway"
	"github.com/ingress-sync/ingress-sync/test/conformance/harness"
	"github.com/ingress-sync/ingress-sync/test/testkit/gatewayapi"
	"github.com/ingress-sync/ingress-sync/test/testkit/netns"
	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
	"github.com/ingress-sync/ingress-sync/test/testkit/world"
)

// The environment: EnvEnable turns the suite on; envBin passes the
// binaries built outside the network namespace to the run inside;
// EnvKeep keeps the World's folder (logs) after the run.
const (
	EnvEnable = harness.EnvEnable
	envBin    = "INGRESS_SYNC_CONFORMANCE_BIN"
	EnvKeep   = "INGRESS_SYNC_CONFORMANCE_KEEP"
)

// The fleet as the cluster sees it: one syncer Pod, whose nginx listens on
// syncerIP, in the watcher's namespace, selected by fleetSelector.
const (
	fleetNamespace = "default"
	syncerIP       = "198.18.0.10"
	fleetLabel     = "app.kubernetes.io/component"
	fleetValue     = "syncer"
)

// enabled is set when the suite runs (TestConformance skips otherwise).
var enabled bool

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(mainConformance(m))
}

func mainConformance(m *testing.M) int {
	if os.Getenv(EnvEnable) != "1" {
		return m.Run()
	}
	if !netns.Inside() {
		return outside()
	}
	w, stop, err := start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		if w != nil {
			stop(true)
		}
		return 1
	}
	enabled = true
	code := m.Run()
	stop(code != 0)
	return code
}

// outside builds the binaries, then runs the tests again in a new network
// namespace (as test/e2e does).
func outside() int {
	bin, err := os.MkdirTemp("", "ingress-sync-conformance-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 1
	}
	defer os.RemoveAll(bin)
	if err := testenv.BuildBinaries(bin); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 1
	}
	os.Setenv(envBin, bin)
	code, err := netns.Reexec()
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 1
	}
	return code
}

// start brings up the World and the harness, creates the syncer's Pod and
// the GatewayClass, and points the suite's kubeconfig at the World. stop
// tears it down, printing the logs' tails when failed.
func start() (*world.World, func(failed bool), error) {
	if err := netns.Setup(); err != nil {
		return nil, nil, err
	}
	if err := harness.Setup(); err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "ingress-sync-conformance-")
	if err != nil {
		return nil, nil, err
	}
	// nginx workers run unprivileged and must traverse to their directory.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, nil, err
	}
	kubelet, err := harness.NewKubelet(dir)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin := os.Getenv(envBin)
	w, err := world.Start(ctx, world.Options{
		BinDir: bin, Dir: dir, Syncers: 1, AdvertiseAddress: netns.AdvertiseAddress,
		WatcherArgs:    watcherArgs,
		SyncerArgs:     []string{"--listen-address", syncerIP, "--holdoff", "100ms", "--max-holdoff", "1s"},
		APIServerFlags: kubelet.APIServerFlags(),
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("start world: %w", err)
	}
	runCtx, stopHarness := context.WithCancel(context.Background())
	done, served := make(chan struct{}), make(chan struct{})
	go func() {
		if err := kubelet.Serve(runCtx); err != nil {
			fmt.Fprintln(os.Stderr, "conformance: the harness's kubelet:", err)
		}
		close(served)
	}()
	stop := func(failed bool) {
		stopHarness()
		<-done
		<-served
		if failed {
			dumpLogs(dir)
		}
		if err := w.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "conformance: stop world:", err)
		}
		if os.Getenv(EnvKeep) == "" {
			os.RemoveAll(dir)
		} else {
			fmt.Fprintln(os.Stderr, "conformance: keeping", dir)
		}
	}
	cl, err := harness.New(w.CP.Config(), slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		close(done)
		return w, stop, err
	}
	cl.ServeLogs(kubelet)
	go func() { cl.Run(runCtx); close(done) }()
	return w, stop, prepare(ctx, w)
}

// watcherArgs are the watcher's flags of a cluster install: the Gateway
// API CRDs are followed within a second, and each Gateway's Service
// selects the fleet's Pods.
var watcherArgs = []string{"--gateway-api-poll-interval", "1s", "--gateway-service-selector", fleetLabel + "=" + fleetValue}

// prepare installs the CRDs, the syncer's Pod and the GatewayClass, waits
// (a while) for the class to be Accepted, and sets KUBECONFIG for the suite.
func prepare(ctx context.Context, w *world.World) error {
	if err := gatewayapi.Install(ctx, w.CP.Config()); err != nil {
		return err
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "syncer-0", Namespace: fleetNamespace,
			Labels:      map[string]string{fleetLabel: fleetValue},
			Annotations: map[string]string{harness.IPAnnotation: syncerIP}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "syncer", Image: "ingress-sync:dev"}}},
	}
	if _, err := w.Kube.CoreV1().Pods(fleetNamespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create the syncer's pod: %w", err)
	}
	if err := createGatewayClass(ctx, w); err != nil {
		return err
	}
	return os.Setenv("KUBECONFIG", w.Kubeconfig)
}

// createGatewayClass creates the class the suite's --gateway-class names,
// of our controller, and waits up to a minute for it to be Accepted (the
// suite then checks it again and reads its supportedFeatures).
func createGatewayClass(ctx context.Context, w *world.World) error {
	gc, err := gatewayclient.NewForConfig(w.CP.Config())
	if err != nil {
		return err
	}
	name := flag.Lookup("gateway-class").Value.String()
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: gateway.DefaultControllerName}}
	if _, err := gc.GatewayV1().GatewayClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create GatewayClass %s: %w", name, err)
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		got, err := gc.GatewayV1().GatewayClasses().Get(ctx, name, metav1.GetOptions{})
		if err == nil && metav1IsTrue(got.Status.Conditions, string(gatewayv1.GatewayClassConditionStatusAccepted)) {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "conformance: GatewayClass %s not Accepted after a minute; the suite will say more\n", name)
	return nil
}

func metav1IsTrue(conds []metav1.Condition, typ string) bool {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

func dumpLogs(dir string) {
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		if len(b) > 8000 {
			b = b[len(b)-8000:]
		}
		fmt.Fprintf(os.Stderr, "\n===== %s (tail) =====\n%s\n", filepath.Base(l), b)
	}
}
