package main

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/model"

	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/nginx"
	"github.com/ingress-sync/ingress-sync/pkg/replay"
)

// errUsage marks a flag error; the message says what to change.
var errUsage = errors.New("usage")

type replayFlags struct {
	nats                         natsFlags
	model                        modelFlags
	at, from, to                 string
	namespace, host              string
	output                       string
	nginxConf, changed, progress bool
	routes                       bool
	nginx                        nginx.Options
	timeout                      time.Duration
}

func parseReplayFlags(args []string, stderr io.Writer) (*replayFlags, error) {
	f := &replayFlags{}
	fs := flag.NewFlagSet("syncer replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: syncer replay --at <time|seq> [--nginx-conf] [flags]
       syncer replay --at <time|seq> --routes [--host h] [flags]
       syncer replay [--from <time|seq>] [--to <time|seq>] [--namespace ns] [--host h] [--changed] [flags]

Rebuilds the Configuration at a point of the stream (--at), or walks the events
between two points and says what each changed: dynamically (routes of hosts,
backends, certificates) or, for the global settings only, by a reload.
--routes prints the route table of the Configuration at --at as syncer routes
prints that of a running nginx, so the two can be diffed.
A point is a stream sequence (42) or an RFC3339 time (2026-11-01T03:12:00Z).

Give replay the flags your syncers run with: the model flags (--configmap,
--ingress-class, ...) for the same Configuration and checksum, and with
--nginx-conf the nginx flags (--nginx-dir, the ports, --listen-address,
--lua-dir, --worker-processes, --worker-shutdown-timeout, the dict sizes, ...)
for the same nginx.conf. Nothing is written to --nginx-dir.

`)
		fs.PrintDefaults()
	}
	f.nats.register(fs)
	f.model.register(fs)
	fs.StringVar(&f.at, "at", "", "show the configuration at this point: an RFC3339 time or a stream sequence")
	fs.StringVar(&f.from, "from", "", "first point of the timeline (default: the start of the stream)")
	fs.StringVar(&f.to, "to", "", "last point of the timeline (default: the end of the stream)")
	fs.StringVar(&f.namespace, "namespace", "", "timeline: keep events in this namespace (or, with --host, touching that host)")
	fs.StringVar(&f.host, "host", "", "timeline: keep changes touching this host (or, with --namespace, events in that namespace); with --routes: only this host's routes")
	fs.BoolVar(&f.changed, "changed", false, "timeline: keep only the events that changed the configuration")
	fs.StringVar(&f.output, "output", "text", "text or json")
	fs.BoolVar(&f.nginxConf, "nginx-conf", false, "with --at: also print the nginx.conf that would have been rendered")
	fs.BoolVar(&f.routes, "routes", false, "with --at: print only the route table, as syncer routes does")
	registerNginxConfFlags(fs, &f.nginx)
	fs.BoolVar(&f.progress, "progress", false, "draw a progress bar on stderr (default: when stderr is a terminal)")
	fs.DurationVar(&f.timeout, "timeout", replay.DefaultTimeout, "bound of each network call (connecting included)")
	if err := fs.Parse(args); err != nil {
		return nil, err // flag.ErrHelp after -h: replayCommand returns nil
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	return f, f.check()
}

// check rejects flag combinations that mean nothing.
func (f *replayFlags) check() error {
	timeline := f.from != "" || f.to != ""
	switch {
	case f.at != "" && timeline:
		return fmt.Errorf("%w: --at shows one point; --from/--to a timeline: give one or the other", errUsage)
	case f.at == "" && !timeline:
		return fmt.Errorf("%w: give --at <time|seq> for the configuration at a point, or --from/--to for a timeline", errUsage)
	case f.nginxConf && f.at == "":
		return fmt.Errorf("%w: --nginx-conf needs --at", errUsage)
	case f.routes && f.at == "":
		return fmt.Errorf("%w: --routes needs --at", errUsage)
	case f.routes && f.nginxConf:
		return fmt.Errorf("%w: --routes prints only the route table: drop --nginx-conf", errUsage)
	case f.at != "" && (f.namespace != "" || f.changed || f.host != "" && !f.routes):
		return fmt.Errorf("%w: --namespace, --host and --changed filter a timeline: use them with --from/--to (or --host with --routes)", errUsage)
	case f.output != "text" && f.output != "json":
		return fmt.Errorf("%w: --output %q: want text or json", errUsage, f.output)
	case f.timeout <= 0:
		return fmt.Errorf("%w: --timeout must be positive", errUsage)
	}
	return nil
}

// points parses --at, --from and --to, naming the flag in errors.
func (f *replayFlags) points() (at, from, to replay.Point, err error) {
	for _, p := range []struct {
		name, value string
		dst         *replay.Point
	}{{"--at", f.at, &at}, {"--from", f.from, &from}, {"--to", f.to, &to}} {
		if *p.dst, err = replay.ParsePoint(p.value); err != nil {
			return at, from, to, fmt.Errorf("%s: %w", p.name, err)
		}
	}
	return at, from, to, nil
}

func replayCommand(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	f, err := parseReplayFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil // the usage was printed
	} else if err != nil {
		return err
	}
	at, from, to, err := f.points()
	if err != nil {
		return err
	}
	rp, done, err := f.replayer(ctx, stderr)
	if err != nil {
		return err
	}
	defer done()
	debug.SetGCPercent(replay.GCPercent)
	if !at.IsZero() {
		snap, err := rp.At(ctx, at)
		done()
		if err != nil {
			return err
		}
		if f.routes {
			view, err := replay.RoutesOf(snap.Configuration, f.host)
			if err != nil {
				return fmt.Errorf("--host: at seq %d: %w", snap.Sequence, err)
			}
			return writeRoutes(stdout, &view, f.output == "json")
		}
		return writeSnapshot(stdout, snap, f.output, f.nginxConf, f.nginx)
	}
	filter := replay.Filter{Namespace: f.namespace, Host: f.host, ChangedOnly: f.changed}
	tl, err := rp.Timeline(ctx, from, to, filter)
	done()
	if err != nil {
		return err
	}
	if f.output == "json" {
		return tl.WriteJSON(stdout)
	}
	return tl.WriteText(stdout, filter)
}

// replayer connects to NATS and returns a Replayer; done finishes the
// progress bar and closes the connection (it may be called twice).
func (f *replayFlags) replayer(ctx context.Context, stderr io.Writer) (*replay.Replayer, func(), error) {
	// As `syncer run` does, so the checksums found here are those the
	// syncers report.
	if err := f.model.complete(&f.nginx); err != nil {
		return nil, nil, err
	}
	opts, sources := f.model.opts, f.model.sources()
	if err := opts.Validate(); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", replay.ErrInvalidOptions, err)
	}
	conn, err := f.nats.dial(ctx, "syncer replay", f.timeout)
	if err != nil {
		return nil, nil, err
	}
	ro := replay.Options{Stream: f.nats.stream, SubjectPrefix: f.nats.prefix, Timeout: f.timeout,
		NewBuilder: func() replay.Builder { return model.NewIncremental(model.NewStore(sources()...), opts) }}
	finish := func() {}
	if f.progress || isTerminal(stderr) {
		bar := replay.NewProgressBar(stderr, "replay")
		ro.Progress, finish = bar.Update, bar.Finish
	}
	rp, err := replay.New(conn.JetStream(), ro)
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return rp, func() { finish(); conn.Close() }, nil
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	file, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := file.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// writeSnapshot prints the snapshot, and with conf the nginx.conf that a
// syncer with nginx options o would have rendered from it.
func writeSnapshot(w io.Writer, snap *replay.Snapshot, output string, conf bool, o nginx.Options) error {
	var rendered []byte
	if conf {
		var err error
		if rendered, err = renderConf(snap.Configuration, o); err != nil {
			return err
		}
	}
	if output == "json" {
		return snap.WriteJSON(w, rendered)
	}
	if err := snap.WriteText(w); err != nil {
		return err
	}
	if conf {
		fmt.Fprintf(w, "\n# nginx.conf at seq %d (--nginx-dir %s)\n", snap.Sequence, o.Dir)
		_, err := w.Write(rendered)
		return err
	}
	return nil
}

// renderConf renders cfg with pkg/nginx's Renderer and options o (the
// syncer's defaults but for the flags given). Rendering writes nothing.
func renderConf(cfg *config.Configuration, o nginx.Options) ([]byte, error) {
	r, err := nginx.NewRenderer(o)
	if err != nil {
		return nil, fmt.Errorf("--nginx-conf: %w", err)
	}
	return r.Render(cfg)
}
