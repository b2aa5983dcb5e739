package main

import (
	"github.com/ingress-sync/ingress-sync/pkg/gateway"
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
	"github.com/ingress-sync/ingress-sync/pkg/nginx"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/pkg/syncer"
)

// natsFlags are the connection flags every subcommand that reads the stream
// takes.
type natsFlags struct {
	url, user, password, creds, stream, prefix string
}

func (f *natsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "nats-url", nats.DefaultURL, "NATS server URLs, comma-separated")
	fs.StringVar(&f.user, "nats-user", "", "NATS user (read-only syncer account)")
	fs.StringVar(&f.password, "nats-password", os.Getenv("NATS_PASSWORD"), "NATS password (default $NATS_PASSWORD)")
	fs.StringVar(&f.creds, "nats-creds", "", "NATS credentials file")
	fs.StringVar(&f.stream, "stream", events.DefaultStream, "JetStream stream holding the ingress events")
	fs.StringVar(&f.prefix, "subject-prefix", events.DefaultSubjectPrefix, "subject prefix of the events")
}

// connect connects as the syncer does: retrying until it succeeds or ctx
// ends.
func (f *natsFlags) connect(ctx context.Context, name string, log *slog.Logger) (*stream.Conn, error) {
	return stream.Connect(ctx, f.url, f.options(name, log)...)
}

// dial connects once, bounded by timeout: a command line tool says at once
// that it cannot reach NATS rather than retrying as the syncer does.
func (f *natsFlags) dial(ctx context.Context, name string, timeout time.Duration) (*stream.Conn, error) {
	opts := append(f.options(name, slog.New(slog.DiscardHandler)), stream.WithDialTimeout(timeout), stream.WithConnectOnce())
	return stream.Connect(ctx, f.url, opts...)
}

// options are the connect options the flags set.
func (f *natsFlags) options(name string, log *slog.Logger) []stream.ConnectOption {
	opts := []stream.ConnectOption{stream.WithName(name), stream.WithConnectLogger(log)}
	if f.user != "" {
		opts = append(opts, stream.WithUserInfo(f.user, f.password))
	}
	if f.creds != "" {
		opts = append(opts, stream.WithCredsFile(f.creds))
	}
	return opts
}

// modelFlags are the flags model.Build and the sources depend on, shared
// by run and replay.
type modelFlags struct {
	opts model.Options
	// gatewayController is the spec.controllerName of the GatewayClasses
	// served (the Gateway API source's).
	gatewayController string
}

func (f *modelFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.opts.ControllerClass, "controller-class", ingress.DefaultControllerClass, "spec.controller of the IngressClasses served")
	fs.StringVar(&f.opts.IngressClass, "ingress-class", ingress.DefaultIngressClass, "ingress class name served (spec.ingressClassName or the legacy annotation)")
	fs.StringVar(&f.gatewayController, "gateway-controller-name", gateway.DefaultControllerName, "spec.controllerName of the GatewayClasses served (as the watcher's flag)")
	fs.BoolVar(&f.opts.WatchIngressWithoutClass, "watch-ingress-without-class", false, "also serve Ingresses without any class")
	fs.StringVar(&f.opts.DefaultBackendService, "default-backend-service", "", "namespace/name of the Service for unmatched requests (default: 404)")
	fs.StringVar(&f.opts.DefaultSSLCertificate, "default-ssl-certificate", "", "namespace/name of the TLS Secret for unknown SNI names (default: self-signed)")
	fs.StringVar(&f.opts.ConfigMap, "configmap", "", "namespace/name of the controller ConfigMap")
	fs.BoolVar(&f.opts.AllowSnippets, "allow-snippet-annotations", false, "accepted for ingress-nginx compatibility; changes nothing: an Ingress with a *-snippet annotation is never served")
	fs.StringVar(&f.opts.TCPServicesConfigMap, "tcp-services-configmap", "", "namespace/name of the TCP services ConfigMap (ingress-nginx's format: port: namespace/service:port[:PROXY][:PROXY])")
	fs.StringVar(&f.opts.UDPServicesConfigMap, "udp-services-configmap", "", "namespace/name of the UDP services ConfigMap (port: namespace/service:port)")
	fs.BoolVar(&f.opts.EnableSSLPassthrough, "enable-ssl-passthrough", false, "serve the ssl-passthrough annotation: TLS connections for those hosts go to their backend unterminated")
	fs.IntVar(&f.opts.MaxUpstreamTLSProfiles, "max-upstream-tls-profiles", model.DefaultMaxUpstreamTLSProfiles, "most distinct backend TLS profiles (proxy-ssl-*), 1 to 256: each is 27 nginx locations and a new one reloads nginx; the routes of Ingresses beyond it answer 503")
}

// complete makes f.opts the Options model.Build gets, in `syncer run` and
// `syncer replay` alike, so that their checksums agree: it tells the model
// the ports nginx and the syncer listen on (a TCP or UDP service there is
// left out; the default metrics port is reserved as in ingress-nginx), and
// nginx whether SSL passthrough is on; it generates the fallback
// certificate, which each process makes its own (its content is not part
// of the checksum). The caller validates f.opts (replay.New does).
func (f *modelFlags) complete(n *nginx.Options) error {
	f.opts.ReservedPorts = []int{
		cmp.Or(n.HTTPPort, nginx.DefaultHTTPPort), cmp.Or(n.HTTPSPort, nginx.DefaultHTTPSPort),
		cmp.Or(n.StatusPort, nginx.DefaultStatusPort), defaultMetricsPort,
	}
	n.EnableSSLPassthrough = f.opts.EnableSSLPassthrough
	fallback, err := certs.Generate(certs.Options{CommonName: "ingress-sync default certificate", Hosts: []string{"ingress-sync.invalid"}})
	if err != nil {
		return err
	}
	f.opts.FallbackCertificate = &config.Certificate{Name: config.FallbackCertificateName, Cert: fallback.CertPEM, Key: fallback.KeyPEM}
	return nil
}

// defaultMetricsPort is the port of --metrics-addr's default.
const defaultMetricsPort = 10254

type runFlags struct {
	nats                natsFlags
	model               modelFlags
	pod, metricsAddr    string
	holdoff, maxHoldoff time.Duration
	logLevel            string
	nginx               nginx.Options
	nginxMode           syncer.NginxMode
}

func parseRunFlags(args []string, stderr io.Writer) (*runFlags, error) {
	f := &runFlags{nginxMode: syncer.NginxChild}
	fs := flag.NewFlagSet("syncer run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.nats.register(fs)
	f.model.register(fs)
	fs.StringVar(&f.pod, "pod-name", defaultPodName(), "name in status reports (default $POD_NAME or the hostname)")
	fs.StringVar(&f.metricsAddr, "metrics-addr", ":"+strconv.Itoa(defaultMetricsPort), "address of /metrics, /healthz and /readyz")
	fs.DurationVar(&f.holdoff, "holdoff", 5*time.Millisecond, "wait this long after an event for more before rebuilding")
	fs.DurationVar(&f.maxHoldoff, "max-holdoff", 100*time.Millisecond, "rebuild at the latest this long after the first event of a burst")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&f.nginx.NginxBinary, "nginx-binary", "", "nginx executable (default: nginx in PATH, then /usr/sbin/nginx)")
	fs.DurationVar(&f.nginx.ReloadTimeout, "reload-timeout", nginx.DefaultReloadTimeout, "bound of nginx -t and of the wait for new workers after a reload (only global settings reload)")
	fs.DurationVar(&f.nginx.StartTimeout, "start-timeout", nginx.DefaultStartTimeout, "bound of the wait for a started nginx to answer")
	fs.Var(&f.nginxMode, "nginx-mode", "child: nginx is this process's child and stops with it; external: `syncer nginx` runs nginx in the same --nginx-dir (its own container, sharing the pod's process namespace), this syncer follows it through its pid file, and nginx keeps serving through a syncer crash")
	registerNginxConfFlags(fs, &f.nginx)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return f, nil
}

// defaultNginxDir is the default of --nginx-dir.
const defaultNginxDir = "/var/lib/ingress-sync"

// registerNginxConfFlags registers every flag of `syncer run` that reaches
// nginx.conf, for run and for `syncer replay --nginx-conf`, so that replay
// given a syncer's flags renders the file that syncer renders. (Options
// that reach the file from the model flags, such as
// --enable-ssl-passthrough, are set by modelFlags.complete.)
func registerNginxConfFlags(fs *flag.FlagSet, o *nginx.Options) {
	fs.IntVar(&o.HTTPPort, "http-port", nginx.DefaultHTTPPort, "nginx HTTP port")
	fs.IntVar(&o.HTTPSPort, "https-port", nginx.DefaultHTTPSPort, "nginx HTTPS port")
	fs.IntVar(&o.StatusPort, "status-port", nginx.DefaultStatusPort, "status and Lua configuration port, on 127.0.0.1 only")
	fs.StringVar(&o.ListenAddress, "listen-address", "", "IP nginx binds for HTTP and HTTPS (default: all)")
	fs.StringVar(&o.Dir, "nginx-dir", defaultNginxDir, "where nginx.conf, Lua files, certificates and temp paths live")
	fs.StringVar(&o.LuaDir, "lua-dir", "", "Lua modules (default: the embedded copy, installed in --nginx-dir)")
	fs.IntVar(&o.WorkerProcesses, "worker-processes", 0, "nginx worker processes (0: one per core)")
	fs.DurationVar(&o.WorkerShutdownTimeout, "worker-shutdown-timeout", nginx.DefaultWorkerShutdownTimeout, "how long old workers drain on reload and stop")
	registerDataPlaneFlags(fs, o)
}

// registerDataPlaneFlags registers the flags that size the Lua data plane
// and its external auth and traffic metrics; all are nginx.conf directives.
func registerDataPlaneFlags(fs *flag.FlagSet, o *nginx.Options) {
	o.RoutesDictSize, o.BodySizeCeiling = nginx.DefaultRoutesDictSize, nginx.DefaultBodySizeCeiling
	fs.Var(sizeFlag{&o.RoutesDictSize}, "routes-dict-size",
		"shared memory for the route tables, an nginx `size` (about 1 KB per Ingress path, see docs/deploy.md)")
	o.LimitsDictSize = nginx.DefaultLimitsDictSize
	fs.Var(sizeFlag{&o.LimitsDictSize}, "limits-dict-size",
		"shared memory for the rate and connection limits, an nginx `size` (about 128 bytes per client address, Ingress and kind of limit)")
	fs.Var(sizeFlag{&o.BodySizeCeiling}, "body-size-ceiling",
		"client_max_body_size, an nginx `size` above every route's own proxy-body-size (which the router enforces); 0: no ceiling")
	fs.IntVar(&o.RegexCacheEntries, "regex-cache-entries", nginx.DefaultRegexCacheEntries,
		"compiled regex paths kept per nginx worker (lua_regex_cache_max_entries); more still work, compiled per request")
	registerAuthFlags(fs, o)
	registerMetricsFlags(fs, &o.Metrics)
}

// sizeFlag is a config.Size flag: digits with an optional k, m or g unit.
type sizeFlag struct{ p *config.Size }

func (s sizeFlag) String() string {
	if s.p == nil {
		return ""
	}
	return string(*s.p)
}

func (s sizeFlag) Set(v string) error {
	if _, ok := config.Size(v).Bytes(); !ok {
		return fmt.Errorf("%q is not an nginx size such as 64m, 512k or 0 (at most 1024g)", v)
	}
	*s.p = config.Size(v)
	return nil
}

func defaultPodName() string {
	if p := os.Getenv("POD_NAME"); p != "" {
		return p
	}
	h, _ := os.Hostname()
	return h
}

func newLogger(level string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})), nil
}

func runCommand(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	f, err := parseRunFlags(args, stderr)
	if err != nil {
		return err
	}
	log, err := newLogger(f.logLevel, stderr)
	if err != nil {
		return err
	}
	f.nginx.Logger = log
	f.nginx.Stdout = stdout // the access log, unless the ConfigMap names a file
	if err := f.model.complete(&f.nginx); err != nil {
		return err
	}
	if err := f.model.opts.Validate(); err != nil {
		return err
	}
	return run(ctx, f, log)
}
