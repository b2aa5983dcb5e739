package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/nginx"
	"github.com/ingress-sync/ingress-sync/pkg/replay"
)

// backendsCommand prints what the Lua balancer of the nginx on this host
// holds, read from its configuration endpoint on 127.0.0.1.
func backendsCommand(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("syncer backends", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: syncer backends [--status-port 10246] [--output table|json]\n\nShows the backends the running nginx's Lua balancer holds.")
		fs.PrintDefaults()
	}
	port := fs.Int("status-port", nginx.DefaultStatusPort, "status and Lua configuration port of nginx, on 127.0.0.1")
	output := fs.String("output", "table", "table or json")
	timeout := fs.Duration("timeout", 5*time.Second, "bound of the request")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return nil // the usage was printed
	} else if err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	case *output != "table" && *output != "json":
		return fmt.Errorf("%w: --output %q: want table or json", errUsage, *output)
	case *port < 1 || *port > 65535:
		return fmt.Errorf("%w: --status-port %d is not a port", errUsage, *port)
	case *timeout <= 0:
		return fmt.Errorf("%w: --timeout must be positive", errUsage)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	b, err := nginx.NewClient(*port, *timeout).GetBackends(ctx)
	if err != nil {
		return fmt.Errorf("backends: reading the Lua endpoint on 127.0.0.1:%d (is nginx running, with this --status-port?): %w", *port, err)
	}
	if *output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(b)
	}
	fmt.Fprintf(stdout, "%d backends (version %d, generation %d)\n", len(b.Backends), b.Version, b.Generation)
	return replay.WriteBackendsTable(stdout, b.Backends)
}
