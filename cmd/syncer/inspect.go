package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/inspect"
	"github.com/ingress-sync/ingress-sync/pkg/nginx"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// The inspection commands, as kubectl ingress-nginx's conf, certs and
// general, and the fleet view of every syncer's reports.

const confUsage = `usage: syncer conf [--nginx-dir /var/lib/ingress-sync] [--status-port 10246] [--output text|json | --json]

Prints the nginx.conf the nginx on this host runs (the syncer's --nginx-dir),
with a first line saying whether its workers serve it (the checksum the Lua
endpoint reports) or another one (a reload under way).`

const certsUsage = `usage: syncer certs [--status-port 10246] [--output table|json | --json]

Shows the certificates the running nginx serves: the Secret, the SNI names,
issuer and expiry of the leaf certificate, and the Ingresses whose routes use
those names. Never a key.`

const generalUsage = `usage: syncer general [--status-port 10246] [--output table|json | --json]

Shows the state the running nginx reports (checksums, worker pid, versions of
the routes, backends and certificates) and the settings nginx.conf gives its
Lua side.`

const fleetUsage = `usage: syncer fleet [--nats-url ...] [--stale 90s] [--output table|json | --json]

Shows the last report of every syncer on the status stream (<stream>_STATUS):
pod, checksum, stream sequence, lag behind the event stream, last report time
and last error. STALE marks reports older than --stale, DISAGREES a fresh
report whose checksum is not the one most fresh syncers report. The NATS user
must be allowed to read the status stream (the watcher's is; the syncer's is
not).`

// encodeJSON prints v as indented JSON.
func encodeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// runningConf is what `syncer conf --json` prints.
type runningConf struct {
	Path     string `json:"path"`
	Checksum string `json:"checksum"`
	// Served is the checksum the workers report; Running: it is the file's.
	Served  string `json:"served"`
	Running bool   `json:"running"`
	PID     int    `json:"pid"`
	Conf    string `json:"conf"`
}

func confCommand(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	dir := defaultNginxDir
	f, err := parseLuaFlags("conf", confUsage, []string{"text", "json"}, args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&dir, "nginx-dir", dir, "the syncer's --nginx-dir")
	})
	if f == nil || err != nil {
		return err
	}
	rc := runningConf{Path: nginx.ConfPath(dir)}
	data, err := os.ReadFile(rc.Path)
	if err != nil {
		return fmt.Errorf("conf: %w (is this the syncer's --nginx-dir?)", err)
	}
	rc.Checksum, rc.Conf = nginx.ConfChecksum(data), string(data)
	c, ctx, cancel := f.client(ctx)
	defer cancel()
	v, err := c.GetVersion(ctx)
	if err != nil {
		return f.readError("conf", err)
	}
	rc.Served, rc.PID, rc.Running = v.Checksum, v.PID, v.Checksum == rc.Checksum
	if f.output == "json" {
		return encodeJSON(stdout, rc)
	}
	if rc.Running {
		fmt.Fprintf(stdout, "# %s: checksum %s, served by nginx (worker pid %d)\n", rc.Path, rc.Checksum, rc.PID)
	} else {
		fmt.Fprintf(stdout, "# %s: checksum %s, but nginx serves %s (a reload is under way)\n", rc.Path, rc.Checksum, rc.Served)
	}
	_, err = io.WriteString(stdout, rc.Conf)
	return err
}

func certsCommand(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	f, err := parseLuaFlags("certs", certsUsage, []string{"table", "json"}, args, stderr, nil)
	if f == nil || err != nil {
		return err
	}
	c, ctx, cancel := f.client(ctx)
	defer cancel()
	held, err := c.GetCertificateChains(ctx)
	if err != nil {
		return f.readError("certs", err)
	}
	routes, err := c.GetRoutes(ctx)
	if err != nil {
		return f.readError("certs", err)
	}
	certs := inspect.NewCertificates(held, routes)
	if f.output == "json" {
		return encodeJSON(stdout, certs)
	}
	return inspect.WriteCertificatesTable(stdout, certs, time.Now())
}

func generalCommand(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	f, err := parseLuaFlags("general", generalUsage, []string{"table", "json"}, args, stderr, nil)
	if f == nil || err != nil {
		return err
	}
	c, ctx, cancel := f.client(ctx)
	defer cancel()
	var g inspect.General
	if g.Version, err = c.GetVersion(ctx); err != nil {
		return f.readError("general", err)
	}
	if g.Settings, err = c.GetGeneral(ctx); err != nil {
		return f.readError("general", err)
	}
	if f.output == "json" {
		return encodeJSON(stdout, g)
	}
	return g.WriteTable(stdout)
}

// fleetFlags are the flags of `syncer fleet`.
type fleetFlags struct {
	nats    natsFlags
	stale   time.Duration
	output  string
	timeout time.Duration
}

func parseFleetFlags(args []string, stderr io.Writer) (*fleetFlags, error) {
	f := &fleetFlags{}
	fs := flag.NewFlagSet("syncer fleet", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, fleetUsage)
		fs.PrintDefaults()
	}
	f.nats.register(fs)
	fs.DurationVar(&f.stale, "stale", inspect.DefaultStaleAfter, "a report older than this is STALE (syncers report every "+events.DefaultStatusInterval.String()+")")
	fs.StringVar(&f.output, "output", "table", "table or json")
	asJSON := fs.Bool("json", false, "same as --output json")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Second, "bound of the whole read, connecting included")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if *asJSON {
		f.output = "json"
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	case f.output != "table" && f.output != "json":
		return nil, fmt.Errorf("%w: --output %q: want table or json", errUsage, f.output)
	case f.stale <= 0 || f.timeout <= 0:
		return nil, fmt.Errorf("%w: --stale and --timeout must be positive", errUsage)
	}
	return f, nil
}

func fleetCommand(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	f, err := parseFleetFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	} else if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	conn, err := f.nats.dial(ctx, "syncer fleet", f.timeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	js := conn.JetStream()
	s, err := js.Stream(ctx, f.nats.stream)
	if err != nil {
		return fmt.Errorf("fleet: stream %s: %w", f.nats.stream, err)
	}
	reports, skipped, err := stream.LastStatuses(ctx, js, f.nats.stream, f.nats.prefix)
	if err != nil {
		return fmt.Errorf("fleet: %w (may this NATS user read %s?)", err, stream.StatusStreamName(f.nats.stream))
	}
	if skipped > 0 {
		fmt.Fprintf(stderr, "syncer fleet: %d reports that are not syncer status were skipped\n", skipped)
	}
	fleet := inspect.NewFleet(f.nats.stream, reports, s.CachedInfo().State.LastSeq, time.Now(), f.stale)
	if f.output == "json" {
		return encodeJSON(stdout, fleet)
	}
	return fleet.WriteTable(stdout)
}
