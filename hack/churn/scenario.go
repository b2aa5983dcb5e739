package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/churn"
	"github.com/ingress-sync/ingress-sync/test/testkit/netns"
)

type scenarioFlags struct {
	binDir, names, output, dir string
	jsonOut                    string
	syncerArgs                 repeated
	duration                   time.Duration
	seed                       uint64
	keep                       bool
	logLevel, cpuProfile       string
}

func parseScenarioFlags(args []string, stderr io.Writer) (*scenarioFlags, error) {
	f := &scenarioFlags{}
	exe, _ := os.Executable()
	fs := flag.NewFlagSet("churn scenario", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.binDir, "bin-dir", filepath.Dir(exe), "directory of the watcher and syncer binaries (default: this binary's)")
	fs.StringVar(&f.names, "scenarios", "", "comma-separated scenarios to run (default all: "+strings.Join(churn.ScenarioNames(), ",")+")")
	fs.DurationVar(&f.duration, "duration", 30*time.Second, "churn duration of the endpoints-1k and ingress-create-10k scenarios")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the generated churn")
	fs.StringVar(&f.output, "output", "table", "results format: table, json or markdown")
	fs.Var(&f.syncerArgs, "syncer-arg", "a flag added to every syncer's command line, e.g. --syncer-arg=--max-holdoff=20ms (repeatable)")
	fs.StringVar(&f.jsonOut, "json", "", "also write the results as JSON to this file")
	fs.StringVar(&f.dir, "dir", "", "work directory for logs, NATS and nginx (default: a new one under /tmp)")
	fs.BoolVar(&f.keep, "keep", false, "keep the work directory")
	fs.StringVar(&f.logLevel, "log-level", "warn", "debug, info, warn or error (logs go to stderr)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of this process (the churn, and the embedded NATS server) to this file")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if f.output != "table" && f.output != "json" && f.output != "markdown" {
		return nil, fmt.Errorf("--output %q: want table, json or markdown", f.output)
	}
	return f, nil
}

// scenarioCommand runs the scenarios in a private network namespace: it
// runs itself again inside one (root needed) and sets it up there.
func scenarioCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, err := parseScenarioFlags(args, stderr)
	if code, done := flagsDone(err, "churn scenario", stderr); done {
		return code
	}
	if !netns.Inside() {
		code, err := netns.Reexec()
		if err != nil {
			fmt.Fprintln(stderr, "churn scenario:", err)
			return 1
		}
		return code
	}
	if err := runScenarios(ctx, f, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "churn scenario:", err)
		return 1
	}
	return 0
}

func runScenarios(ctx context.Context, f *scenarioFlags, stdout, stderr io.Writer) error {
	if err := netns.Setup(); err != nil {
		return err
	}
	log, err := newLogger(f.logLevel, stderr)
	if err != nil {
		return err
	}
	dir, cleanup, err := workDir(f.dir, f.keep, stderr)
	if err != nil {
		return err
	}
	defer cleanup()
	stopProfile, err := startCPUProfile(f.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	o := churn.ScenarioOptions{BinDir: f.binDir, Dir: dir, Duration: f.duration, Seed: f.seed, SyncerArgs: f.syncerArgs, Progress: stderr, Logger: log}
	if f.names != "" {
		o.Names = strings.Split(f.names, ",")
	}
	results, err := churn.RunScenarios(ctx, o)
	if err != nil {
		return err
	}
	if f.jsonOut != "" {
		if err := writeJSONFile(f.jsonOut, results); err != nil {
			return err
		}
	}
	switch f.output {
	case "json":
		return churn.WriteScenariosJSON(stdout, results)
	case "markdown":
		return churn.WriteScenariosMarkdown(stdout, results)
	}
	return churn.WriteScenariosTable(stdout, results)
}

// workDir makes the work directory, traversable by nginx's unprivileged
// workers, and says how to clean it up.
func workDir(dir string, keep bool, stderr io.Writer) (string, func(), error) {
	var err error
	if dir == "" {
		dir, err = os.MkdirTemp("", "ingress-sync-churn-")
	} else {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		return "", nil, err
	}
	return dir, func() {
		if keep {
			fmt.Fprintln(stderr, "churn scenario: kept", dir)
			return
		}
		_ = os.RemoveAll(dir)
	}, nil
}

// startCPUProfile profiles this process into path until the returned stop
// is called; "" profiles nothing.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	out, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		out.Close()
	}, nil
}

func writeJSONFile(path string, results []churn.ScenarioResult) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := churn.WriteScenariosJSON(out, results); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// repeated is a repeatable string flag.
type repeated []string

func (r *repeated) String() string { return strings.Join(*r, " ") }

func (r *repeated) Set(v string) error {
	*r = append(*r, v)
	return nil
}
