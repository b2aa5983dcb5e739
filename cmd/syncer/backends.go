package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/nginx"
	"github.com/ingress-sync/ingress-sync/pkg/replay"
)

// luaFlags are the flags of the subcommands that read the Lua
// configuration endpoint of the nginx on this host (backends, routes).
type luaFlags struct {
	port    int
	output  string
	timeout time.Duration
	outputs []string // the --output values the command takes
}

// parseLuaFlags registers the shared flags and extra (the command's own)
// on a new FlagSet, parses args and checks them. After -h it prints the
// usage and returns nil flags and a nil error: the command is done.
func parseLuaFlags(name, usage string, outputs []string, args []string, stderr io.Writer, extra func(*flag.FlagSet)) (*luaFlags, error) {
	f := &luaFlags{outputs: outputs}
	fs := flag.NewFlagSet("syncer "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, usage)
		fs.PrintDefaults()
	}
	fs.IntVar(&f.port, "status-port", nginx.DefaultStatusPort, "status and Lua configuration port of nginx, on 127.0.0.1")
	fs.StringVar(&f.output, "output", outputs[0], fmt.Sprintf("%s or %s", outputs[0], outputs[1]))
	fs.DurationVar(&f.timeout, "timeout", 5*time.Second, "bound of the request")
	asJSON := fs.Bool("json", false, "same as --output json")
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if *asJSON {
		f.output = "json"
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	case !slices.Contains(outputs, f.output):
		return nil, fmt.Errorf("%w: --output %q: want %s or %s", errUsage, f.output, outputs[0], outputs[1])
	case f.port < 1 || f.port > 65535:
		return nil, fmt.Errorf("%w: --status-port %d is not a port", errUsage, f.port)
	case f.timeout <= 0:
		return nil, fmt.Errorf("%w: --timeout must be positive", errUsage)
	}
	return f, nil
}

// client returns a client of the endpoint and ctx bounded by --timeout.
func (f *luaFlags) client(ctx context.Context) (*nginx.Client, context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	return nginx.NewClient(f.port, f.timeout), ctx, cancel
}

// readError says where the read failed and what to check.
func (f *luaFlags) readError(what string, err error) error {
	return fmt.Errorf("%s: reading the Lua endpoint on 127.0.0.1:%d (is nginx running, with this --status-port?): %w", what, f.port, err)
}

// backendsCommand prints what the Lua balancer of the nginx on this host
// holds, read from its configuration endpoint on 127.0.0.1.
func backendsCommand(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	f, err := parseLuaFlags("backends", "usage: syncer backends [--status-port 10246] [--output table|json | --json]\n\nShows the backends the running nginx's Lua balancer holds.",
		[]string{"table", "json"}, args, stderr, nil)
	if f == nil || err != nil {
		return err
	}
	c, ctx, cancel := f.client(ctx)
	defer cancel()
	b, err := c.GetBackends(ctx)
	if err != nil {
		return f.readError("backends", err)
	}
	if f.output == "json" {
		return encodeJSON(stdout, b)
	}
	fmt.Fprintf(stdout, "%d backends (version %d, generation %d)\n", len(b.Backends), b.Version, b.Generation)
	return replay.WriteBackendsTable(stdout, b.Backends)
}
