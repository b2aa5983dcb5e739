package watch_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
)

// controlPlane is the kube-apiserver shared by the tests of this package,
// set once by TestMain; every test works in a namespace of its own.
var controlPlane *testenv.ControlPlane

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	if testing.Short() {
		return m.Run() // tests needing the control plane skip themselves, saying why
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, err := testenv.Run(ctx, testenv.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: control plane: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "control plane %s ready in %s\n", cp.URL, cp.StartDuration.Round(time.Millisecond))
	controlPlane = cp
	defer func() {
		if err := cp.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop control plane: %v\n", err)
		}
	}()
	return m.Run()
}
