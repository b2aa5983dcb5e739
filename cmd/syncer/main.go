// Command syncer runs beside nginx: it consumes the ingress event stream,
// rebuilds the Configuration and keeps nginx serving it. Subcommands:
//
//	syncer [run] [flags]   consume the stream and drive nginx (default)
//	syncer nginx [flags]   run nginx for a syncer run with --nginx-mode=external
//	syncer replay ...      rebuild past configurations from the stream
//	syncer decode          turn one stream payload on stdin into JSON
//	syncer backends ...    show what the running nginx's Lua balancer holds
//	syncer routes ...      show the route table the running nginx's router holds
//	syncer conf ...        print the nginx.conf the running nginx serves
//	syncer certs ...       show the certificates the running nginx serves (never keys)
//	syncer general ...     show the running nginx's state and Lua settings
//	syncer fleet ...       show every syncer's last report from the status stream
//	syncer migrate-check   check ingress-nginx Ingresses and ConfigMap (docs/migration.md)
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"run", "consume the stream and keep nginx serving it (default)", runCommand},
		{"nginx", "run nginx for a syncer run with --nginx-mode=external, and outlive it", nginxCommand},
		{"replay", "rebuild past configurations from the stream and explain changes", replayCommand},
		{"decode", "turn one stream payload on stdin into JSON", decodeCommand},
		{"backends", "show what the running nginx's Lua balancer holds", backendsCommand},
		{"routes", "show the route table the running nginx's router holds", routesCommand},
		{"conf", "print the nginx.conf the running nginx serves", confCommand},
		{"certs", "show the certificates the running nginx serves (never keys)", certsCommand},
		{"general", "show the running nginx's state and the settings of its Lua side", generalCommand},
		{"fleet", "show every syncer's last report from the status stream", fleetCommand},
		{"migrate-check", "check ingress-nginx Ingresses and ConfigMap against what ingress-sync does", migrateCommand},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := dispatch(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "syncer:", err)
		os.Exit(1)
	}
}

func dispatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	name := "run"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		name, args = args[0], args[1:]
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(ctx, args, stdin, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "unknown command %q; commands:\n", name)
	for _, c := range commands() {
		fmt.Fprintf(stderr, "  %-9s %s\n", c.name, c.summary)
	}
	return fmt.Errorf("unknown command %q", name)
}
