// Package netns runs a program in a private network namespace of its own, so
// that tests and the demo can give backends addresses that kube-apiserver
// accepts in EndpointSlices (not loopback) without touching the machine's
// network: inside, TestRange is routed to the namespace's own lo device and
// exists nowhere else.
package netns

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
)

// TestRange is routed to lo inside the namespace (RFC 2544 benchmarking
// range). AdvertiseAddress is the address kube-apiserver advertises there.
const (
	TestRange        = "198.18.0.0/24"
	AdvertiseAddress = "198.18.0.254"
)

// envMarker is set in the environment of the re-executed program.
const envMarker = "INGRESS_SYNC_NETNS"

// ErrNotRoot is returned when the namespace cannot be made without root.
var ErrNotRoot = errors.New("netns: a private network namespace needs root (unshare -n)")

// Inside reports whether this process runs in the namespace Reexec made.
func Inside() bool { return os.Getenv(envMarker) == "1" }

// Reexec runs this program again, with the same arguments, in a new network
// namespace (`unshare -n`), and returns its exit code. extraFiles are passed
// to the child as fds 3, 4, ... (listeners made in the host namespace stay
// in the host namespace, which is how the demo is reached from outside).
func Reexec(extraFiles ...*os.File) (int, error) {
	if os.Geteuid() != 0 {
		return 0, ErrNotRoot
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return 0, fmt.Errorf("netns: %w (install util-linux)", err)
	}
	self, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("netns: %w", err)
	}
	cmd := exec.Command(unshare, append([]string{"-n", "--", self}, os.Args[1:]...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), envMarker+"=1")
	cmd.ExtraFiles = extraFiles
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// Ctrl-C and SIGTERM go to the child, which stops what it started; this
	// process waits for it instead of dying first (which would SIGKILL it).
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("netns: run in new namespace: %w", err)
	}
	go func() {
		for sig := range sigs {
			_ = cmd.Process.Signal(sig)
		}
	}()
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), nil
	}
	if err != nil {
		return 0, fmt.Errorf("netns: run in new namespace: %w", err)
	}
	return 0, nil
}

// Setup brings lo up and routes TestRange to it. Call it once, inside.
func Setup() error {
	if !Inside() {
		return errors.New("netns: Setup outside the namespace made by Reexec would change this machine's network")
	}
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"route", "add", "local", TestRange, "dev", "lo"},
	} {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("netns: ip %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// Addr returns the i-th address of TestRange (1..253).
func Addr(i int) string {
	if i < 1 || i > 253 {
		panic(fmt.Sprintf("netns: address index %d out of 1..253", i))
	}
	return fmt.Sprintf("198.18.0.%d", i)
}
