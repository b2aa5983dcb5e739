package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/nginx"
	"github.com/ingress-sync/ingress-sync/pkg/replay"
)

const routesUsage = `usage: syncer routes [--host h] [--status-port 10246] [--output text|json | --json]

Shows the route table the running nginx's router holds: one line per route
(host, type, path, backend, Ingress, settings), for every host or one.
syncer replay --at <point> --routes prints a replayed configuration the same
way, so the two outputs can be diffed.`

// routesCommand prints the route table router.lua of the nginx on this
// host holds, read from its configuration endpoint on 127.0.0.1.
func routesCommand(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	var host string
	f, err := parseLuaFlags("routes", routesUsage, []string{"text", "json"}, args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&host, "host", "", `only this host: a name, "*.example.com" or "_" (the default server)`)
	})
	if f == nil || err != nil {
		return err
	}
	c, ctx, cancel := f.client(ctx)
	defer cancel()
	host = strings.ToLower(host)
	view, err := liveRoutes(ctx, c, host)
	switch {
	case errors.Is(err, nginx.ErrNotFound):
		return fmt.Errorf("routes: nginx holds no routes for host %q: %w", host, err)
	case err != nil:
		return f.readError("routes", err)
	}
	return writeRoutes(stdout, &view, f.output == "json")
}

// liveRoutes reads the route table, or the routes of host when it is not "".
func liveRoutes(ctx context.Context, c *nginx.Client, host string) (replay.RouteView, error) {
	if host == "" {
		r, err := c.GetRoutes(ctx)
		return replay.NewRouteView(r.Checksum, r.Hosts), err
	}
	h, err := c.GetHost(ctx, host)
	return replay.NewRouteView("", []nginx.Host{h}), err
}

// writeRoutes prints a route view, live or replayed, as text or JSON.
func writeRoutes(w io.Writer, v *replay.RouteView, asJSON bool) error {
	if asJSON {
		return v.WriteJSON(w)
	}
	return v.WriteText(w)
}
