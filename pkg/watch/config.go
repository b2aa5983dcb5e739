package watch

import (
	"github.com/ingress-sync/ingress-sync/pkg/gateway"

	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ingress-sync/ingress-sync/internal/httpserver"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// Defaults of Config.
const (
	DefaultElectionID = "ingress-sync-watcher"
	// DefaultLeaseDuration, DefaultRenewDeadline and DefaultRetryPeriod
	// bound a failover to about LeaseDuration + 2.4 RetryPeriod (4.2 s)
	// after the leader dies: a standby takes the Lease once it has seen it
	// unrenewed for LeaseDuration, measured on its own clock (clock skew
	// between nodes does not matter), checking every RetryPeriod (with
	// client-go's jitter of 1.2). The leader renews every RetryPeriod and
	// stops publishing when it could not for RenewDeadline, a second before
	// any standby may take over: renewals may take up to about a second
	// each before a healthy leader steps down. A replica that still
	// believes it leads after that (a long pause) is fenced: see
	// stream.WithFencing.
	DefaultLeaseDuration = 3 * time.Second
	DefaultRenewDeadline = 2 * time.Second
	DefaultRetryPeriod   = 500 * time.Millisecond
	DefaultWorkers       = 4
	// DefaultStatusMaxWait bounds how long an Ingress's status address
	// waits for the syncers (see Config.StatusSyncers). An apply takes
	// milliseconds, a reload seconds: a syncer that has not applied an
	// Ingress within a minute is stuck or gone, and a gone one stops
	// counting once its last report is older than DefaultReportStaleAfter.
	DefaultStatusMaxWait = time.Minute
	// DefaultStreamCheckInterval is how often the leader asks whether the
	// event stream is still the one it reconciled with (Config.StreamCheckInterval).
	// A publish that conflicts or fails makes the leader check at once too.
	DefaultStreamCheckInterval = time.Second
	// DefaultPublishAckTimeout is how long the watcher waits for the
	// acknowledgement of one publish attempt before it sends the event
	// again (deduplicated by its Nats-Msg-Id). Acks take milliseconds; one
	// that has not come within 2 s will not come (a stream without a
	// leader, just recreated), and waiting longer only holds the object's
	// later events behind it.
	DefaultPublishAckTimeout = 2 * time.Second
	// DefaultAPIProbeInterval is how often the watcher asks the
	// kube-apiserver's /readyz while the informers cannot reach it
	// (Config.APIProbeInterval), and DefaultAPIRecoveryJitter bounds the
	// random delay after which a standby's informers resume once it
	// answers (Config.APIRecoveryJitter): apigate.go.
	DefaultAPIProbeInterval  = time.Second
	DefaultAPIRecoveryJitter = time.Second
	// DefaultGatewayAPIPollInterval is how often the watcher asks the API
	// server's discovery whether the Gateway API CRDs are served (one small
	// request each time; Config.GatewayAPIPollInterval).
	DefaultGatewayAPIPollInterval = 10 * time.Second
)

// ErrInvalidConfig wraps every validation error of Config.
var ErrInvalidConfig = errors.New("watch: invalid configuration")

// Config is everything the watcher needs. Zero fields take the defaults
// above, and NATSURL, Stream, SubjectPrefix, ControllerClass and
// IngressClass those the syncers share: nats.DefaultURL,
// events.DefaultStream, events.DefaultSubjectPrefix,
// ingress.DefaultControllerClass and ingress.DefaultIngressClass. Validate
// reports what cannot work.
type Config struct {
	Client kubernetes.Interface // required
	// RESTConfig, when set, is the configuration Client was made from:
	// the informers then list and watch through clients of their own made
	// from it, behind a gate that holds their requests while the API is
	// unreachable and lets them go within APIProbeInterval (default
	// DefaultAPIProbeInterval) of its /readyz answering again, standbys
	// after a random delay below APIRecoveryJitter (default
	// DefaultAPIRecoveryJitter): apigate.go. Without it the informers use
	// Client and GatewayClient, and resume within client-go's backoff
	// (up to a minute) after an outage.
	RESTConfig        *rest.Config
	APIProbeInterval  time.Duration
	APIRecoveryJitter time.Duration
	// GatewayClient reads the Gateway API objects (gateway.go); nil
	// watches no Gateway API kind. The CRDs need not be installed: the
	// watcher picks them up, and lets them go, every
	// GatewayAPIPollInterval (default DefaultGatewayAPIPollInterval).
	GatewayClient          gatewayclient.Interface
	GatewayAPIPollInterval time.Duration
	// GatewayControllerName is the spec.controllerName of the
	// GatewayClasses we serve (default gateway.DefaultControllerName):
	// only Secrets that Gateways of those classes name are published.
	GatewayControllerName string
	// GatewayServiceSelector, a label selector of the fleet's Pods
	// ("app.kubernetes.io/component=syncer"), makes the leader keep a
	// Service per Gateway of ours in ElectionNamespace (gwservice.go), of
	// type GatewayServiceType (default LoadBalancer, or ClusterIP), whose
	// targetPorts are allocated from GatewayPortRange (default
	// DefaultGatewayPortRange). Empty keeps none: no Gateway gets an
	// address, none is Programmed.
	GatewayServiceSelector string
	GatewayServiceType     corev1.ServiceType
	GatewayPortRange       string

	NATSURL         string // ignored with EmbeddedNATSDir: the server listens on its host:port
	NATSCredsFile   string
	NATSUser        string
	NATSPassword    string
	EmbeddedNATSDir string // run nats-server in-process, storing JetStream here

	Stream         string
	SubjectPrefix  string
	StreamReplicas int
	StreamHistory  int64

	WatchNamespace string   // "" watches all namespaces
	ConfigMaps     []string // namespace/name of every ConfigMap to publish

	ControllerClass          string
	IngressClass             string
	WatchIngressWithoutClass bool
	// DefaultSSLCertificate is "namespace/name" of a TLS Secret published
	// even when no Ingress references it (the syncers' default certificate).
	DefaultSSLCertificate string
	// PublishAllTLSSecrets publishes every kubernetes.io/tls Secret of the
	// watched namespaces, referenced or not (the behaviour of ingress-nginx's
	// informers). Off by default: private keys no Ingress uses stay out of
	// the stream.
	PublishAllTLSSecrets bool

	LeaderElect       bool
	ElectionID        string
	ElectionNamespace string
	// LeaseDuration (a whole number of seconds, as the Lease stores it),
	// RenewDeadline and RetryPeriod are client-go's leader election
	// timings; see DefaultLeaseDuration. Validate wants LeaseDuration >
	// RenewDeadline > 1.2 RetryPeriod.
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration

	PublishService       string   // namespace/name
	PublishStatusAddress []string // IPs or host names
	// StatusSyncers is how many of the syncers that report must serve an
	// Ingress at its published version before its status address is
	// written (default StatusAll); StatusMaxWait bounds the wait for them
	// (default DefaultStatusMaxWait), after which the address is written
	// anyway, with a Warning Event. An Ingress that a syncer reports not
	// served (its Service is missing, its TLS Secret has not arrived)
	// waits with no bound.
	StatusSyncers StatusRule
	StatusMaxWait time.Duration

	MetricsAddr string // "" serves no HTTP
	WatcherID   string // required: the Lease identity and Event.WatcherID
	Workers     int

	// PublishAttempts and PublishAckTimeout tune the publisher's own retries
	// (default stream.DefaultRetryAttempts and DefaultPublishAckTimeout).
	// When they are exhausted the key is queued again, so nothing is lost
	// either way: fewer attempts only hand the retrying to the watcher sooner.
	PublishAttempts   int
	PublishAckTimeout time.Duration

	// ReportStaleAfter is how long a syncer's last status report counts
	// for the Ingress Events (default DefaultReportStaleAfter).
	ReportStaleAfter time.Duration

	// StreamCheckInterval is how often the leader checks that the event
	// stream exists and is the one it reconciled with (default
	// DefaultStreamCheckInterval). A missing stream is created again; a
	// recreated one (its sequences restarted) is reconciled with the API
	// again, and marked reconciled once all of it is republished.
	StreamCheckInterval time.Duration

	Logger   *slog.Logger         // default slog.Default()
	Registry *prometheus.Registry // default httpserver.NewRegistry()
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&c.NATSURL, nats.DefaultURL)
	def(&c.Stream, events.DefaultStream)
	def(&c.SubjectPrefix, events.DefaultSubjectPrefix)
	def(&c.ControllerClass, ingress.DefaultControllerClass)
	def(&c.IngressClass, ingress.DefaultIngressClass)
	def(&c.ElectionID, DefaultElectionID)
	def(&c.GatewayControllerName, gateway.DefaultControllerName)
	def(&c.GatewayPortRange, DefaultGatewayPortRange)
	if c.GatewayServiceType == "" {
		c.GatewayServiceType = corev1.ServiceTypeLoadBalancer
	}
	defDur := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	defDur(&c.LeaseDuration, DefaultLeaseDuration)
	defDur(&c.RenewDeadline, DefaultRenewDeadline)
	defDur(&c.RetryPeriod, DefaultRetryPeriod)
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
	if c.PublishAttempts == 0 {
		c.PublishAttempts = stream.DefaultRetryAttempts
	}
	defDur(&c.PublishAckTimeout, DefaultPublishAckTimeout)
	defDur(&c.ReportStaleAfter, DefaultReportStaleAfter)
	defDur(&c.StatusMaxWait, DefaultStatusMaxWait)
	defDur(&c.StreamCheckInterval, DefaultStreamCheckInterval)
	defDur(&c.GatewayAPIPollInterval, DefaultGatewayAPIPollInterval)
	defDur(&c.APIProbeInterval, DefaultAPIProbeInterval)
	defDur(&c.APIRecoveryJitter, DefaultAPIRecoveryJitter)
	if c.StatusSyncers == "" {
		c.StatusSyncers = StatusAll
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Registry == nil {
		c.Registry = httpserver.NewRegistry()
	}
	return c
}

// Validate checks c after defaults; errors wrap ErrInvalidConfig.
func (c Config) Validate() error {
	c = c.withDefaults()
	checks := []func() error{c.validateBasics, c.validateNATS, c.validateElection, c.validateStatus, c.validateGatewayServices}
	var errs []error
	for _, check := range checks {
		if err := check(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, errors.Join(errs...))
	}
	return nil
}

func (c Config) validateBasics() error {
	var errs []error
	if c.Client == nil {
		errs = append(errs, errors.New("no Kubernetes client"))
	}
	if c.WatcherID == "" {
		errs = append(errs, errors.New("empty watcher id"))
	}
	if c.ReportStaleAfter < 0 || c.StreamCheckInterval < 0 || c.GatewayAPIPollInterval < 0 {
		errs = append(errs, fmt.Errorf("report stale-after %s, stream check interval %s and Gateway API poll interval %s must be >= 0",
			c.ReportStaleAfter, c.StreamCheckInterval, c.GatewayAPIPollInterval))
	}
	if c.APIProbeInterval < 0 || c.APIRecoveryJitter < 0 {
		errs = append(errs, fmt.Errorf("API probe interval %s and recovery jitter %s must be >= 0", c.APIProbeInterval, c.APIRecoveryJitter))
	}
	if c.Workers < 1 || c.PublishAttempts < 1 || c.PublishAckTimeout < 0 {
		errs = append(errs, fmt.Errorf("workers %d and publish attempts %d must be >= 1, ack timeout %s >= 0",
			c.Workers, c.PublishAttempts, c.PublishAckTimeout))
	}
	if c.WatchNamespace != "" {
		if msgs := validation.IsDNS1123Label(c.WatchNamespace); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("watch namespace %q: %s", c.WatchNamespace, strings.Join(msgs, "; ")))
		}
	}
	for _, cm := range c.ConfigMaps {
		if _, _, err := splitNamespacedName(cm); err != nil {
			errs = append(errs, fmt.Errorf("configmap: %w", err))
		}
	}
	if c.ControllerClass == "" || c.IngressClass == "" {
		errs = append(errs, errors.New("empty controller class or ingress class"))
	}
	return errors.Join(errs...)
}

func (c Config) validateNATS() error {
	var errs []error
	if c.EmbeddedNATSDir == "" && c.NATSURL == "" {
		errs = append(errs, errors.New("no NATS URL"))
	}
	if c.NATSCredsFile != "" && c.NATSUser != "" {
		errs = append(errs, errors.New("NATS creds file and user are exclusive"))
	}
	if c.NATSPassword != "" && c.NATSUser == "" {
		errs = append(errs, errors.New("NATS password without a user"))
	}
	if c.EmbeddedNATSDir != "" {
		if _, _, err := hostPort(c.NATSURL); err != nil {
			errs = append(errs, err)
		}
	}
	cfg := c.streamConfig()
	if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (c Config) validateElection() error {
	if !c.LeaderElect {
		return nil
	}
	var errs []error
	if c.ElectionID == "" || c.ElectionNamespace == "" {
		errs = append(errs, errors.New("leader election needs an election id and namespace (or POD_NAMESPACE)"))
	}
	// client-go's own checks: the renewals' jitter is 1.2 (leaderelection.JitterFactor).
	if c.LeaseDuration <= c.RenewDeadline || c.RenewDeadline <= c.RetryPeriod*6/5 || c.RetryPeriod <= 0 {
		errs = append(errs, fmt.Errorf("want lease duration %s > renew deadline %s > 1.2 × retry period %s > 0",
			c.LeaseDuration, c.RenewDeadline, c.RetryPeriod))
	}
	if c.LeaseDuration%time.Second != 0 {
		errs = append(errs, fmt.Errorf("lease duration %s is not a whole number of seconds (the Lease stores seconds)", c.LeaseDuration))
	}
	return errors.Join(errs...)
}

func (c Config) validateStatus() error {
	var errs []error
	if c.PublishService != "" && len(c.PublishStatusAddress) > 0 {
		errs = append(errs, errors.New("publish service and publish status address are exclusive"))
	}
	if c.PublishService != "" {
		if _, _, err := splitNamespacedName(c.PublishService); err != nil {
			errs = append(errs, fmt.Errorf("publish service: %w", err))
		}
	}
	for _, a := range c.PublishStatusAddress {
		if net.ParseIP(a) == nil && len(validation.IsDNS1123Subdomain(a)) > 0 {
			errs = append(errs, fmt.Errorf("publish status address %q is neither an IP nor a DNS name", a))
		}
	}
	if !c.StatusSyncers.valid() {
		errs = append(errs, fmt.Errorf("status syncers %q: want %s, %s or %s", c.StatusSyncers, StatusAll, StatusQuorum, StatusOne))
	}
	if c.StatusMaxWait < 0 {
		errs = append(errs, fmt.Errorf("status max wait %s must be >= 0", c.StatusMaxWait))
	}
	return errors.Join(errs...)
}

func (c Config) validateGatewayServices() error {
	var errs []error
	if _, _, err := parsePortRange(c.GatewayPortRange); err != nil {
		errs = append(errs, err)
	}
	if c.GatewayServiceType != corev1.ServiceTypeLoadBalancer && c.GatewayServiceType != corev1.ServiceTypeClusterIP {
		errs = append(errs, fmt.Errorf("gateway service type %q: want %s or %s", c.GatewayServiceType, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeClusterIP))
	}
	if c.GatewayServiceSelector == "" {
		return errors.Join(errs...)
	}
	if _, err := labels.ConvertSelectorToLabelsMap(c.GatewayServiceSelector); err != nil {
		errs = append(errs, fmt.Errorf("gateway service selector %q: %w", c.GatewayServiceSelector, err))
	}
	if c.ElectionNamespace == "" {
		errs = append(errs, errors.New("a gateway service selector needs the election namespace (or POD_NAMESPACE), where the Services are kept"))
	}
	return errors.Join(errs...)
}

// streamConfig is the event stream the watcher provisions.
func (c Config) streamConfig() stream.Config {
	return stream.Config{
		Name:          c.Stream,
		SubjectPrefix: c.SubjectPrefix,
		Replicas:      c.StreamReplicas,
		History:       c.StreamHistory,
	}
}

// splitNamespacedName parses "namespace/name".
func splitNamespacedName(s string) (ns, name string, err error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return "", "", fmt.Errorf("%q is not namespace/name", s)
	}
	return ns, name, nil
}

// hostPort returns the host and port of a nats:// URL, for the embedded server.
func hostPort(url string) (string, int, error) {
	rest, ok := strings.CutPrefix(url, "nats://")
	if !ok {
		return "", 0, fmt.Errorf("embedded NATS needs a nats://host:port URL, got %q", url)
	}
	host, port, err := net.SplitHostPort(rest)
	if err != nil {
		return "", 0, fmt.Errorf("NATS URL %q: %w", url, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return "", 0, fmt.Errorf("NATS URL %q: bad port", url)
	}
	return host, p, nil
}
