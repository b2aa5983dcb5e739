package main

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/test/testkit/churn"
)

// runFlags are the flags of `churn run`.
type runFlags struct {
	spec                     churn.Spec
	addresses                string
	target, kubeconfig       string
	natsURL, natsUser        string
	natsPassword             string
	stream, prefix           string
	controllerClass          string
	workers, maxPending      int
	skipSetup, startBackends bool
	probe                    churn.ProbeConfig
	syncers                  keyValues
	pids                     keyValues
	settle, drain            time.Duration
	output, logLevel         string
}

// keyValues is a repeatable name=value flag.
type keyValues [][2]string

func (kv *keyValues) String() string { return fmt.Sprint(*kv) }

func (kv *keyValues) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" || v == "" {
		return fmt.Errorf("want name=value, got %q", s)
	}
	*kv = append(*kv, [2]string{k, v})
	return nil
}

func parseRunFlags(args []string, stderr io.Writer) (*runFlags, error) {
	f := &runFlags{spec: churn.DefaultSpec()}
	fs := flag.NewFlagSet("churn run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	registerSpec(fs, &f.spec, &f.addresses)
	fs.StringVar(&f.target, "target", "stream", "where to write: kube (through --kubeconfig) or stream (to JetStream)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (--target kube)")
	fs.StringVar(&f.natsURL, "nats-url", "", "NATS URL: the stream target, and for both targets the stream tap and the syncers' status reports (applied latency, stream lag)")
	fs.StringVar(&f.natsUser, "nats-user", "", "NATS user")
	fs.StringVar(&f.natsPassword, "nats-password", "", "NATS password")
	fs.StringVar(&f.stream, "stream", events.DefaultStream, "JetStream stream of the events")
	fs.StringVar(&f.prefix, "subject-prefix", events.DefaultSubjectPrefix, "subject prefix of the events")
	fs.StringVar(&f.controllerClass, "controller-class", ingress.DefaultControllerClass, "spec.controller of the IngressClass the setup creates")
	fs.IntVar(&f.workers, "workers", 16, "concurrent API writes (--target kube); one object is written by one worker")
	fs.IntVar(&f.maxPending, "max-pending", 8192, "events in flight to the stream (--target stream)")
	fs.BoolVar(&f.skipSetup, "skip-setup", false, "the cluster was set up by an earlier run with the same flags and seed")
	fs.BoolVar(&f.startBackends, "start-backends", false, "start an echo backend on every --addresses address at --port (inside a private network namespace only)")
	fs.StringVar(&f.probe.URL, "nginx-url", "", "nginx HTTP URL to probe through, e.g. http://127.0.0.1:8080 (backends must be echo servers named by their address)")
	fs.IntVar(&f.probe.Concurrency, "probe-concurrency", 2, "endpoint changes followed at once")
	fs.DurationVar(&f.probe.Interval, "probe-interval", 5*time.Millisecond, "time between two probe requests of one change")
	fs.DurationVar(&f.probe.Timeout, "probe-timeout", 10*time.Second, "give up on a change not served within this")
	fs.Var(&f.syncers, "syncer", "pod=metrics-URL of a syncer to wait for and report (repeatable), e.g. syncer-0=http://127.0.0.1:10254/metrics")
	fs.Var(&f.pids, "pid", "name=PID of a process to report CPU and RSS of (repeatable); a name starting with \"syncer\" reports its child nginx too")
	fs.DurationVar(&f.settle, "settle-timeout", 5*time.Minute, "wait at most this for the syncers to apply the setup")
	fs.DurationVar(&f.drain, "drain-timeout", 2*time.Minute, "wait at most this for the syncers to apply the churn")
	fs.StringVar(&f.output, "output", "table", "report format: table or json")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error (logs go to stderr)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return f, f.validate()
}

func (f *runFlags) validate() error {
	addrs, err := churn.ParseAddresses(f.addresses)
	if err != nil {
		return err
	}
	f.spec.Addresses = addrs
	switch {
	case f.target != "kube" && f.target != "stream":
		return fmt.Errorf("--target %q: want kube or stream", f.target)
	case f.target == "kube" && f.kubeconfig == "":
		return errors.New("--target kube needs --kubeconfig")
	case f.target == "stream" && f.natsURL == "":
		return errors.New("--target stream needs --nats-url")
	case f.output != "table" && f.output != "json":
		return fmt.Errorf("--output %q: want table or json", f.output)
	}
	if f.probe.URL != "" || f.startBackends {
		if err := churn.CheckAddresses(addrs); err != nil {
			return err
		}
	}
	return f.spec.Validate()
}

// registerSpec binds the workload flags to spec.
func registerSpec(fs *flag.FlagSet, s *churn.Spec, addresses *string) {
	fs.IntVar(&s.Namespaces, "namespaces", s.Namespaces, "namespaces the Ingresses are spread over")
	fs.IntVar(&s.Ingresses, "ingresses", s.Ingresses, "base Ingresses, each with its own Service and EndpointSlice")
	fs.IntVar(&s.TLSEvery, "tls-every", s.TLSEvery, "one Ingress in this many has a TLS Secret (0: none)")
	fs.IntVar(&s.MinEndpoints, "min-endpoints", s.MinEndpoints, "endpoints of a Service at least")
	fs.IntVar(&s.MaxEndpoints, "max-endpoints", s.MaxEndpoints, "endpoints of a Service at most")
	fs.StringVar(addresses, "addresses", "198.18.0.1-198.18.0.240", "endpoint address pool: addresses and ranges, comma-separated")
	fs.Func("port", "endpoint port (default 8080)", func(v string) error {
		p, err := strconv.ParseInt(v, 10, 32)
		s.Port = int32(p)
		return err
	})
	fs.StringVar(&s.NamespacePrefix, "namespace-prefix", s.NamespacePrefix, "namespaces are <prefix>-<n>")
	fs.StringVar(&s.Domain, "domain", s.Domain, "hosts are app-<i>.<domain>")
	fs.StringVar(&s.IngressClass, "ingress-class", s.IngressClass, "spec.ingressClassName of the Ingresses")
	fs.IntVar(&s.MaxExtraIngresses, "max-extra-ingresses", s.MaxExtraIngresses, "Ingresses the churn may create besides the base ones")
	fs.Float64Var(&s.EndpointRate, "endpoint-rate", s.EndpointRate, "endpoint changes per second (scale up, down, replace a pod IP)")
	fs.Float64Var(&s.IngressRate, "ingress-rate", s.IngressRate, "Ingress creates, updates and deletes per second")
	fs.Float64Var(&s.SecretRate, "secret-rate", s.SecretRate, "TLS Secret rotations per second")
	fs.IntVar(&s.Events, "events", s.Events, "stop after this many changes (0: no bound)")
	fs.DurationVar(&s.Duration, "duration", s.Duration, "stop at this offset from the start (0: no bound)")
	fs.Uint64Var(&s.Seed, "seed", s.Seed, "seed of the generated sequence")
}

func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, err := parseRunFlags(args, stderr)
	if code, done := flagsDone(err, "churn", stderr); done {
		return code
	}
	log, err := newLogger(f.logLevel, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "churn:", err)
		return 2
	}
	rep, err := run(ctx, f, log, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "churn:", err)
		return 1
	}
	if f.output == "json" {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteTable(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "churn:", err)
		return 1
	}
	return 0
}

// run wires the flags into a churn.Config and runs it.
func run(ctx context.Context, f *runFlags, log *slog.Logger, progress io.Writer) (*churn.Report, error) {
	cfg := churn.Config{Spec: f.spec, ControllerClass: f.controllerClass, TargetName: f.target, Stream: f.stream, Prefix: f.prefix,
		Probe: f.probe, SkipSetup: f.skipSetup, SettleTimeout: f.settle, DrainTimeout: f.drain, Progress: progress, Logger: log}
	for _, kv := range f.syncers {
		cfg.Syncers = append(cfg.Syncers, churn.SyncerRef{Pod: kv[0], MetricsURL: kv[1]})
	}
	for _, kv := range f.pids {
		pid, err := strconv.Atoi(kv[1])
		if err != nil {
			return nil, fmt.Errorf("--pid %s=%s: %w", kv[0], kv[1], err)
		}
		p := churn.ProcessSpec{Name: kv[0], Pid: pid}
		if strings.HasPrefix(kv[0], "syncer") {
			p.Children = kv[0] + " nginx"
		}
		cfg.Processes = append(cfg.Processes, p)
	}
	var err error
	if f.spec.TLSEvery > 0 {
		if cfg.Certs, err = churn.CertificatePool(f.spec.Domain, 4); err != nil {
			return nil, err
		}
	}
	if f.startBackends {
		b, err := churn.StartBackends(f.spec.Addresses, f.spec.Port)
		if err != nil {
			return nil, err
		}
		defer func() { _ = b.Close() }()
	}
	closeTarget, err := wireTarget(ctx, f, &cfg, log)
	if err != nil {
		return nil, err
	}
	defer closeTarget()
	return churn.Run(ctx, cfg)
}

// wireTarget connects NATS (when given) and makes the target.
func wireTarget(ctx context.Context, f *runFlags, cfg *churn.Config, log *slog.Logger) (func(), error) {
	var conn *stream.Conn
	if f.natsURL != "" {
		opts := []stream.ConnectOption{stream.WithName("churn"), stream.WithConnectOnce(), stream.WithConnectLogger(log)}
		if f.natsUser != "" {
			opts = append(opts, stream.WithUserInfo(f.natsUser, f.natsPassword))
		}
		var err error
		if conn, err = stream.Connect(ctx, f.natsURL, opts...); err != nil {
			return nil, err
		}
		cfg.NATS = conn
	}
	closeAll := func() {
		if conn != nil {
			conn.Close()
		}
	}
	if f.target == "kube" {
		rc, err := churn.LoadKubeconfig(f.kubeconfig)
		if err == nil {
			cfg.Target, err = churn.NewKubeTarget(rc, f.workers)
		}
		if err != nil {
			closeAll()
			return nil, err
		}
		return closeAll, nil
	}
	t, err := churn.NewStreamTarget(conn.JetStream(), f.prefix, f.maxPending)
	if err != nil {
		closeAll()
		return nil, err
	}
	cfg.Target = t
	return func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = t.Close(cctx)
		closeAll()
	}, nil
}
