// Command watcher publishes every change of the ingress inputs of a
// Kubernetes cluster to a NATS JetStream stream. It only parses and checks
// flags and wires pkg/watch; see that package for what it does.
package main

import (
	"github.com/ingress-sync/ingress-sync/pkg/gateway"

	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ingress-sync/ingress-sync/internal/group"
	"github.com/ingress-sync/ingress-sync/internal/kubeconfig"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/pkg/watch"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	code := run(ctx, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

// run is main without the process: 0 on a clean stop, 2 on bad flags, 1 on
// any other error.
func run(ctx context.Context, args []string, stderr io.Writer) int {
	f, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "watcher: %v\n", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: f.logLevel}))
	cfg, err := f.config(log)
	if err != nil {
		fmt.Fprintf(stderr, "watcher: %v\n", err)
		return 2
	}
	w, err := watch.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "watcher: %v\n", err)
		return 2
	}
	log.Info("watcher starting", "id", cfg.WatcherID, "stream", cfg.Stream, "prefix", cfg.SubjectPrefix,
		"namespace", cfg.WatchNamespace, "leaderElect", cfg.LeaderElect)
	parts := []group.Part{{Name: "watcher", Start: w.Start}}
	if p, ok, err := f.admissionPart(cfg.Client, w.RouteOurs, log); err != nil {
		fmt.Fprintf(stderr, "watcher: %v\n", err)
		return 2
	} else if ok {
		parts = append(parts, p)
	}
	if err := group.Run(ctx, log, parts...); err != nil {
		log.Error("watcher failed", "err", err)
		return 1
	}
	log.Info("watcher stopped")
	return 0
}

// flags are the command-line options.
type flags struct {
	kubeconfig                        string
	natsURL, natsCreds, natsUser      string
	natsPassword, embeddedNATS        string
	stream, subjectPrefix             string
	streamReplicas                    int
	streamHistory                     int64
	watchNamespace                    string
	configMap, tcpConfigMap, udpCM    string
	controllerClass, ingressClass     string
	gatewayController                 string
	gatewayPoll                       time.Duration
	gatewaySelector, gatewaySvcType   string
	gatewayPorts                      string
	defaultSSLCertificate             string
	withoutClass, leaderElect         bool
	publishAllTLSSecrets              bool
	electionID, electionNamespace     string
	leaseDuration, renewDeadline      time.Duration
	retryPeriod                       time.Duration
	apiProbe, apiJitter               time.Duration
	publishService, publishStatusAddr string
	statusSyncers                     string
	statusMaxWait                     time.Duration
	metricsAddr, watcherID            string
	workers                           int
	logLevel                          slog.Level
	admission                         admissionFlags
}

func parseFlags(args []string, stderr io.Writer) (*flags, error) {
	var f flags
	fs := flag.NewFlagSet("watcher", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, else in-cluster)")
	fs.StringVar(&f.natsURL, "nats-url", nats.DefaultURL, "NATS server URLs, comma-separated; with --embedded-nats the host:port to listen on")
	fs.StringVar(&f.natsCreds, "nats-creds", "", "NATS credentials file")
	fs.StringVar(&f.natsUser, "nats-user", "", "NATS user")
	fs.StringVar(&f.natsPassword, "nats-password", "", "NATS password (default $NATS_PASSWORD)")
	fs.StringVar(&f.embeddedNATS, "embedded-nats", "", "run nats-server in this process, storing JetStream in this folder")
	fs.StringVar(&f.stream, "stream", events.DefaultStream, "JetStream stream name")
	fs.StringVar(&f.subjectPrefix, "subject-prefix", events.DefaultSubjectPrefix, "subject prefix of the events")
	fs.IntVar(&f.streamReplicas, "stream-replicas", 1, "stream replicas (3 in a NATS cluster)")
	fs.Int64Var(&f.streamHistory, "stream-history", stream.DefaultHistory, "messages kept per object (-1 unlimited)")
	fs.StringVar(&f.watchNamespace, "watch-namespace", "", "watch only this namespace (default all)")
	fs.StringVar(&f.configMap, "configmap", "", "namespace/name of the controller ConfigMap")
	fs.StringVar(&f.tcpConfigMap, "tcp-services-configmap", "", "namespace/name of the TCP services ConfigMap")
	fs.StringVar(&f.udpCM, "udp-services-configmap", "", "namespace/name of the UDP services ConfigMap")
	fs.StringVar(&f.controllerClass, "controller-class", ingress.DefaultControllerClass, "spec.controller of our IngressClasses")
	fs.StringVar(&f.ingressClass, "ingress-class", ingress.DefaultIngressClass, "ingress class name we serve")
	fs.StringVar(&f.gatewayController, "gateway-controller-name", gateway.DefaultControllerName, "spec.controllerName of our GatewayClasses: only the TLS Secrets that Gateways of those classes name are published")
	fs.DurationVar(&f.gatewayPoll, "gateway-api-poll-interval", watch.DefaultGatewayAPIPollInterval, "how often to ask the API server whether the Gateway API CRDs are served (installed or removed CRDs are followed without a restart)")
	fs.StringVar(&f.gatewaySelector, "gateway-service-selector", "", "label selector of the syncers' Pods (app.kubernetes.io/component=syncer): keep a Service per Gateway of ours, in --election-namespace, that gives it its address (none without it)")
	fs.StringVar(&f.gatewaySvcType, "gateway-service-type", string(corev1.ServiceTypeLoadBalancer), "type of the Gateways' Services: LoadBalancer or ClusterIP")
	fs.StringVar(&f.gatewayPorts, "gateway-port-range", watch.DefaultGatewayPortRange, "ports of the syncers' Pods given to the Gateways' listeners (targetPorts of their Services), low-high")
	fs.BoolVar(&f.withoutClass, "watch-ingress-without-class", false, "also serve Ingresses without any class")
	fs.BoolVar(&f.publishAllTLSSecrets, "publish-all-tls-secrets", false, "publish every kubernetes.io/tls Secret, not only those an Ingress names")
	fs.StringVar(&f.defaultSSLCertificate, "default-ssl-certificate", "", "namespace/name of a TLS Secret to publish even when no Ingress names it (the syncers' default certificate)")
	fs.BoolVar(&f.leaderElect, "leader-elect", true, "elect one publishing replica with a Lease")
	fs.StringVar(&f.electionID, "election-id", watch.DefaultElectionID, "name of the Lease")
	fs.StringVar(&f.electionNamespace, "election-namespace", "", "namespace of the Lease (default $POD_NAMESPACE)")
	fs.DurationVar(&f.leaseDuration, "lease-duration", watch.DefaultLeaseDuration, "how long a standby waits, after the Lease was last renewed, before taking it (whole seconds; > --renew-deadline)")
	fs.DurationVar(&f.renewDeadline, "renew-deadline", watch.DefaultRenewDeadline, "how long the leader retries renewing the Lease before it stops publishing (> 1.2 × --retry-period)")
	fs.DurationVar(&f.retryPeriod, "retry-period", watch.DefaultRetryPeriod, "how often the leader renews the Lease and a standby checks it")
	fs.DurationVar(&f.apiProbe, "api-probe-interval", watch.DefaultAPIProbeInterval, "while the informers cannot reach the kube-apiserver, how often to ask its /readyz; they resume their watches within this of its answer")
	fs.DurationVar(&f.apiJitter, "api-recovery-jitter", watch.DefaultAPIRecoveryJitter, "after a kube-apiserver outage, a standby's informers resume after a random delay below this (the replica that led resumes at once)")
	fs.StringVar(&f.publishService, "publish-service", "", "namespace/name of the Service whose addresses go into Ingress status")
	fs.StringVar(&f.publishStatusAddr, "publish-status-address", "", "comma-separated IPs or host names for Ingress status")
	fs.StringVar(&f.statusSyncers, "status-syncers", string(watch.StatusAll), "how many of the syncers that report must serve an Ingress before its status address is written: all, quorum or one")
	fs.DurationVar(&f.statusMaxWait, "status-max-wait", watch.DefaultStatusMaxWait, "write an Ingress's status address after waiting this long for the syncers, with a Warning Event (an Ingress a syncer reports not served waits with no bound)")
	fs.StringVar(&f.metricsAddr, "metrics-addr", ":10254", "address of /metrics, /healthz and /readyz (empty: none)")
	fs.StringVar(&f.watcherID, "watcher-id", "", "identity of this replica (default $POD_NAME, else the host name)")
	fs.IntVar(&f.workers, "workers", watch.DefaultWorkers, "concurrent publishers")
	fs.TextVar(&f.logLevel, "log-level", slog.LevelInfo, "debug, info, warn or error")
	fs.StringVar(&f.admission.addr, "admission-addr", "", "serve the validating admission webhook of Ingresses over TLS on this address, e.g. :8443 (empty: off)")
	fs.StringVar(&f.admission.certFile, "admission-cert-file", "", "PEM serving certificate of the admission webhook (read again when it changes)")
	fs.StringVar(&f.admission.keyFile, "admission-key-file", "", "PEM private key of the admission webhook's certificate")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := f.admission.check(); err != nil {
		return nil, err
	}
	return &f, nil
}

// config turns the flags (and the POD_* environment) into a watch.Config.
func (f *flags) config(log *slog.Logger) (watch.Config, error) {
	restCfg, err := kubeconfig.RESTConfig(f.kubeconfig)
	if err != nil {
		return watch.Config{}, err
	}
	restCfg.UserAgent = "ingress-sync-watcher"
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return watch.Config{}, err
	}
	gwClient, err := gatewayclient.NewForConfig(restCfg)
	if err != nil {
		return watch.Config{}, err
	}
	id, err := f.id()
	if err != nil {
		return watch.Config{}, err
	}
	return watch.Config{
		Client: client, RESTConfig: restCfg, APIProbeInterval: f.apiProbe, APIRecoveryJitter: f.apiJitter,
		GatewayClient: gwClient, GatewayControllerName: f.gatewayController, GatewayAPIPollInterval: f.gatewayPoll,
		GatewayServiceSelector: f.gatewaySelector, GatewayServiceType: corev1.ServiceType(f.gatewaySvcType), GatewayPortRange: f.gatewayPorts,
		NATSURL: f.natsURL, NATSCredsFile: f.natsCreds, NATSUser: f.natsUser,
		NATSPassword: orEnv(f.natsPassword, "NATS_PASSWORD"), EmbeddedNATSDir: f.embeddedNATS,
		Stream: f.stream, SubjectPrefix: f.subjectPrefix, StreamReplicas: f.streamReplicas, StreamHistory: f.streamHistory,
		WatchNamespace: f.watchNamespace, ConfigMaps: nonEmpty(f.configMap, f.tcpConfigMap, f.udpCM),
		ControllerClass: f.controllerClass, IngressClass: f.ingressClass, WatchIngressWithoutClass: f.withoutClass,
		DefaultSSLCertificate: f.defaultSSLCertificate, PublishAllTLSSecrets: f.publishAllTLSSecrets,
		LeaderElect: f.leaderElect, ElectionID: f.electionID, ElectionNamespace: orEnv(f.electionNamespace, "POD_NAMESPACE"),
		LeaseDuration: f.leaseDuration, RenewDeadline: f.renewDeadline, RetryPeriod: f.retryPeriod,
		PublishService: f.publishService, PublishStatusAddress: nonEmpty(strings.Split(f.publishStatusAddr, ",")...),
		StatusSyncers: watch.StatusRule(f.statusSyncers), StatusMaxWait: f.statusMaxWait,
		MetricsAddr: f.metricsAddr, WatcherID: id, Workers: f.workers, Logger: log,
	}, nil
}

// id is --watcher-id, else $POD_NAME, else the host name.
func (f *flags) id() (string, error) {
	if id := orEnv(f.watcherID, "POD_NAME"); id != "" {
		return id, nil
	}
	return os.Hostname()
}

func orEnv(v, env string) string {
	if v != "" {
		return v
	}
	return os.Getenv(env)
}

// nonEmpty returns the trimmed, non-empty values.
func nonEmpty(vs ...string) []string {
	var out []string
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
