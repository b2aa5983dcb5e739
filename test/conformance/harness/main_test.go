package harness

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/ingress-sync/ingress-sync/test/testkit/netns"
	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
)

// kube is the control plane's client and cluster its running harness; nil
// when EnvEnable is not set.
var (
	kube    kubernetes.Interface
	cluster *Cluster
)

func TestMain(m *testing.M) { os.Exit(mainHarness(m)) }

func mainHarness(m *testing.M) int {
	if os.Getenv(EnvEnable) != "1" {
		return m.Run()
	}
	if !netns.Inside() {
		code, err := netns.Reexec()
		if err != nil {
			fmt.Fprintln(os.Stderr, "harness:", err)
			return 1
		}
		return code
	}
	if err := netns.Setup(); err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		return 1
	}
	if err := Setup(); err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cp, err := testenv.Run(ctx, testenv.Options{AdvertiseAddress: netns.AdvertiseAddress})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "harness: control plane:", err)
		return 1
	}
	defer cp.Stop()
	if kube, err = kubernetes.NewForConfig(cp.Config()); err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		return 1
	}
	if cluster, err = New(cp.Config(), slog.New(slog.NewTextHandler(os.Stderr, nil))); err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		return 1
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { cluster.Run(runCtx); close(done) }()
	code := m.Run()
	stop()
	<-done
	return code
}

// needCluster skips a test that needs the control plane when EnvEnable is
// not set, saying so.
func needCluster(t *testing.T) {
	t.Helper()
	if cluster == nil {
		t.Skipf("needs root and a control plane: %s=1 (make conformance) runs it", EnvEnable)
	}
}

// eventually polls cond every 100ms until it holds, failing the test with
// its last message after timeout.
func eventually(t *testing.T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", timeout, msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
