// Command churn generates churn against ingress-sync and measures how fast
// it follows; see test/testkit/churn for what it does and measures. It
// drives the test harness, so it lives in hack/ and never ships (`make
// build` builds it into bin/ for `make bench`).
//
//	churn [run] --target kube --kubeconfig FILE [flags]    through the Kubernetes API
//	churn [run] --target stream --nats-url URL [flags]     straight to the event stream
//	churn scenario [--scenarios a,b] [--output markdown]   the benchmark scenarios of `make bench`
//
// Progress goes to stderr every second; the report (a table, or JSON with
// --output json) to stdout.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// dispatch runs a subcommand and returns the exit code: 0, 1 on failure, 2
// on bad flags.
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	name := "run"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		name, args = args[0], args[1:]
	}
	switch name {
	case "run":
		return runCommand(ctx, args, stdout, stderr)
	case "scenario":
		return scenarioCommand(ctx, args, stdout, stderr)
	}
	fmt.Fprintf(stderr, "churn: unknown command %q; commands: run (default), scenario\n", name)
	return 2
}

// flagsDone handles the outcome of parsing flags: --help ends with 0, an
// error with 2; anything else goes on.
func flagsDone(err error, cmd string, stderr io.Writer) (code int, done bool) {
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0, true
	case err != nil:
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return 2, true
	}
	return 0, false
}

// newLogger logs text at level to w.
func newLogger(level string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}
