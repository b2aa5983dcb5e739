package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/ingress-sync/ingress-sync/internal/retry"
	"github.com/ingress-sync/ingress-sync/pkg/nginx"
)

// confPoll paces the wait for the syncer's first nginx.conf.
var confPoll = retry.Backoff{Base: 200 * time.Millisecond, Max: 200 * time.Millisecond}

// nginxCommand is `syncer nginx`, the keeper: it runs nginx for a syncer
// that runs with --nginx-mode=external in the same --nginx-dir, in
// another container of the pod. It waits for the nginx.conf that syncer
// writes, runs nginx as its child with nginx's access log on its stdout
// and error log on its stderr, restarts nginx when it exits, and drains
// it on SIGTERM. It holds no NATS or Kubernetes credentials and pushes
// nothing: the syncer does, through the loopback Lua endpoints, and a
// syncer that crashes leaves nginx serving.
func nginxCommand(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	var o nginx.Options
	var logLevel string
	fs := flag.NewFlagSet("syncer nginx", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.NginxBinary, "nginx-binary", "", "nginx executable (default: nginx in PATH, then /usr/sbin/nginx)")
	fs.StringVar(&o.Dir, "nginx-dir", defaultNginxDir, "the syncer's --nginx-dir: nginx.conf, Lua files, certificates, pid and temp files")
	fs.IntVar(&o.StatusPort, "status-port", nginx.DefaultStatusPort, "the syncer's --status-port, polled on 127.0.0.1 to see that nginx answers")
	fs.DurationVar(&o.WorkerShutdownTimeout, "worker-shutdown-timeout", nginx.DefaultWorkerShutdownTimeout, "how long nginx drains on SIGTERM before it is killed (the syncer's value)")
	fs.DurationVar(&o.StartTimeout, "start-timeout", nginx.DefaultStartTimeout, "bound of the wait for a started nginx to answer")
	fs.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	log, err := newLogger(logLevel, stderr)
	if err != nil {
		return err
	}
	o.Logger, o.Stdout = log, stdout
	proc, err := nginx.NewProcess(o)
	if err != nil {
		return err
	}
	if !waitForConf(ctx, log, filepath.Join(o.Dir, "nginx.conf")) {
		return nil
	}
	return proc.Start(ctx)
}

// waitForConf waits until conf exists (the syncer has written its first
// configuration) or ctx ends, and reports which.
func waitForConf(ctx context.Context, log *slog.Logger, conf string) bool {
	for logged := false; ; logged = true {
		_, err := os.Stat(conf)
		if err == nil {
			return true
		}
		if !errors.Is(err, fs.ErrNotExist) {
			log.Warn("nginx.conf unreadable", "path", conf, "err", err)
		} else if !logged {
			log.Info("waiting for the syncer's nginx.conf", "path", conf)
		}
		if !retry.Sleep(ctx, nil, confPoll.Delay(1)) {
			return false
		}
	}
}
