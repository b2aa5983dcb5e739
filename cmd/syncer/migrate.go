package main

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/migrate"
	"github.com/ingress-sync/ingress-sync/pkg/model"
)

type migrateFlags struct {
	nats                 natsFlags
	dir, kubeconfig      string
	fromStream, json     bool
	namespace, configMap string
	ingressClass         string
	timeout              time.Duration
}

func parseMigrateFlags(args []string, stderr io.Writer) (*migrateFlags, error) {
	f := &migrateFlags{}
	fs := flag.NewFlagSet("syncer migrate-check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: syncer migrate-check --dir <manifests> [flags]
       syncer migrate-check --kubeconfig <file> [--namespace ns] [flags]
       syncer migrate-check --from-stream [nats flags] [flags]

Checks Ingresses and the controller ConfigMap written for ingress-nginx: for
every nginx.ingress.kubernetes.io annotation and ConfigMap key in use, whether
ingress-sync supports it, supports it with a documented difference, refuses it
(snippets) or does not support it; then the problems ingress-sync's model
reports for those objects (invalid values, conflicts). Exits non-zero when
anything would not behave as in ingress-nginx. See docs/migration.md.

`)
		fs.PrintDefaults()
	}
	f.nats.register(fs)
	fs.StringVar(&f.dir, "dir", "", "read the *.yaml, *.yml and *.json manifests under this directory")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "read the cluster of this kubeconfig (\"-\": $KUBECONFIG or the in-cluster account)")
	fs.BoolVar(&f.fromStream, "from-stream", false, "read the ingress event stream (--nats-url, --stream, ...)")
	fs.StringVar(&f.namespace, "namespace", "", "with --kubeconfig: read only this namespace (the ConfigMap is read wherever it is)")
	fs.StringVar(&f.configMap, "configmap", migrate.DefaultConfigMap, "namespace/name of the ingress-nginx controller ConfigMap (\"\": none)")
	fs.StringVar(&f.ingressClass, "ingress-class", ingress.DefaultIngressClass, "check the Ingresses of this class and those without a class (\"\": every Ingress)")
	fs.BoolVar(&f.json, "json", false, "print the report as JSON")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "bound of each API call (--kubeconfig) or of the whole read (--from-stream)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	return f, f.check()
}

func (f *migrateFlags) check() error {
	n := 0
	for _, set := range []bool{f.dir != "", f.kubeconfig != "", f.fromStream} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
		return fmt.Errorf("%w: give one input: --dir, --kubeconfig or --from-stream", errUsage)
	case f.namespace != "" && f.kubeconfig == "":
		return fmt.Errorf("%w: --namespace needs --kubeconfig", errUsage)
	case f.timeout <= 0:
		return fmt.Errorf("%w: --timeout must be positive", errUsage)
	}
	return nil
}

func migrateCommand(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	f, err := parseMigrateFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	} else if err != nil {
		return err
	}
	in, err := f.read(ctx)
	if err != nil {
		return err
	}
	r, err := migrate.Check(in, migrate.Options{IngressClass: f.ingressClass, ConfigMap: f.configMap, NewBuilder: migrateBuilder})
	if err != nil {
		return err
	}
	if f.json {
		err = r.WriteJSON(stdout)
	} else {
		err = r.WriteText(stdout)
	}
	if err != nil {
		return err
	}
	return r.Err()
}

// read reads the input the flags name.
func (f *migrateFlags) read(ctx context.Context) (*migrate.Input, error) {
	switch {
	case f.dir != "":
		return migrate.ReadDir(f.dir)
	case f.kubeconfig != "":
		path := f.kubeconfig
		if path == "-" {
			path = ""
		}
		return migrate.ReadKubeconfig(ctx, path, migrate.ClusterOptions{Namespace: f.namespace, ConfigMap: f.configMap, Timeout: f.timeout})
	}
	conn, err := f.nats.dial(ctx, "syncer migrate-check", f.timeout)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return migrate.ReadStream(ctx, conn.JetStream(), migrate.StreamOptions{Stream: f.nats.stream, SubjectPrefix: f.nats.prefix, Timeout: f.timeout})
}

// migrateBuilder is the syncer's builder, as migrate-check builds with it.
func migrateBuilder(o migrate.BuildOptions) migrate.Builder {
	opts := model.Options{ControllerClass: o.ControllerClass, IngressClass: o.IngressClass, ConfigMap: o.ConfigMap}
	return model.NewIncremental(model.NewStore(ingress.NewSource()), opts)
}
