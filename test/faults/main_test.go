package faults

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/natscluster"
	"github.com/ingress-sync/ingress-sync/test/testkit/netns"
	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
)

// envBin passes the binaries built outside the namespace to the suite inside.
const envBin = "INGRESS_SYNC_FAULTS_BIN"

func TestMain(m *testing.M) {
	os.Exit(mainFaults(m))
}

func mainFaults(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		return m.Run() // TestFaults skips; the renderer's test runs
	}
	if !netns.Inside() {
		return outside()
	}
	if err := netns.Setup(); err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		return 1
	}
	return m.Run()
}

// outside builds the watcher, syncer and nats-server binaries, then runs
// the suite again in a new network namespace. It never skips: without root
// or unshare, the suite fails.
func outside() int {
	bin, err := os.MkdirTemp("", "ingress-sync-faults-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		return 1
	}
	defer os.RemoveAll(bin)
	if err := build(bin); err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		return 1
	}
	os.Setenv(envBin, bin)
	code, err := netns.Reexec()
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		return 1
	}
	return code
}

func build(bin string) error {
	if err := testenv.BuildBinaries(bin); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, err := natscluster.Build(ctx, bin)
	return err
}
