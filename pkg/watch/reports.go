package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	kuberecord "k8s.io/client-go/tools/record"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/internal/retry"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/gateway"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// EventComponent is the source component of the Events the watcher posts
// (kubectl describe shows it under From).
const EventComponent = "ingress-sync"

// Defaults of the report reading.
const (
	// DefaultReportStaleAfter is how long a syncer's last report counts: a
	// syncer reports at least every events.DefaultStatusInterval, so one
	// silent for four of them is gone (or cut off) and no longer delays the
	// Sync events.
	DefaultReportStaleAfter = 4 * events.DefaultStatusInterval
	// decideEvery is how often the ledger is consulted without new reports
	// (for stale syncers, and changes acked after the reports that cover
	// them).
	decideEvery = time.Second
)

// eventScheme names the kinds of the objects Events go to: client-go's
// and the Gateway API's (the informers' objects carry no kind).
var eventScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(scheme.AddToScheme(s))
	utilruntime.Must(gatewayv1.Install(s))
	return s
}()

// reporter turns the syncers' status reports (the status stream) into
// Kubernetes Events on the routes (Ingresses and HTTPRoutes), during one
// leader term. The ledger decides what to post; client-go's event recorder
// posts it, aggregating repeats and limiting each object to a burst of 25 Events, then one per
// five minutes (its defaults).
type reporter struct {
	w *Watcher
	// changed is called after each report and when a syncer's reports go
	// stale: the status writer then looks again at the Ingresses whose
	// address waits for the syncers. nil calls nothing.
	changed func()

	mu    sync.Mutex
	l     *ledger
	extra []notice // Events of other parts of the term (the status writer), posted with the next decision
}

func newReporter(w *Watcher) *reporter {
	return &reporter{w: w, l: newLedger(w.cfg.ReportStaleAfter)}
}

// published takes the publisher's acknowledgement of an event of a route
// (an Ingress or an HTTPRoute).
func (r *reporter) published(ev events.Event) {
	if !syncKinds[ev.Kind] {
		return
	}
	k := objectKey{Kind: ev.Kind, Namespace: ev.Namespace, Name: ev.Name}
	r.mu.Lock()
	defer r.mu.Unlock()
	if ev.Op == events.OpDelete {
		r.l.deleted(k)
		return
	}
	r.l.changedAt(k, ev.Sequence)
}

// serving says how many current syncers serve Ingress k published at
// stream sequence seq (ledger.serving).
func (r *reporter) serving(k objectKey, seq uint64) serving {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.l.serving(k, seq, time.Now())
}

// notify posts n with the next decision.
func (r *reporter) notify(n notice) {
	r.mu.Lock()
	r.extra = append(r.extra, n)
	r.mu.Unlock()
}

// Start reads the reports and posts Events until ctx ends.
func (r *reporter) Start(ctx context.Context) error {
	b := kuberecord.NewBroadcaster(kuberecord.WithContext(ctx))
	defer b.Shutdown()
	b.StartRecordingToSink(&eventSink{client: r.w.cfg.Client, m: r.w.metrics, log: r.w.log})
	rec := b.NewRecorder(eventScheme, corev1.EventSource{Component: EventComponent, Host: r.w.cfg.WatcherID})
	stop, err := r.consumeRetrying(ctx)
	if err != nil {
		return nil // ctx ended
	}
	defer stop()
	tick := time.NewTicker(decideEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			r.post(rec)
		}
	}
}

// consumeRetrying starts reading the status stream, retrying with backoff
// while it cannot; it fails only when ctx ends.
func (r *reporter) consumeRetrying(ctx context.Context) (func(), error) {
	var stop func()
	err := retry.Until(ctx, natsBackoff, func() error {
		var err error
		stop, err = r.consume(ctx)
		return err
	}, func(attempt int, wait time.Duration, err error) {
		r.w.log.Warn("reading syncer reports failed, retrying", "attempt", attempt, "retryIn", wait, "err", err)
	})
	return stop, err
}

// consume reads the last report of every syncer, then every new one,
// through an ordered consumer (which recreates itself after an outage).
func (r *reporter) consume(ctx context.Context) (func(), error) {
	cctx, cancel := context.WithTimeout(ctx, natsTimeout)
	defer cancel()
	name := stream.StatusStreamName(r.w.cfg.Stream)
	oc, err := r.w.nats.js.OrderedConsumer(cctx, name, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{events.StatusFilter(r.w.cfg.SubjectPrefix)},
		DeliverPolicy:  jetstream.DeliverLastPerSubjectPolicy,
	})
	if err != nil {
		return nil, fmt.Errorf("consumer on %s: %w", name, err)
	}
	cc, err := oc.Consume(r.take, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		r.w.log.Debug("reading syncer reports", "err", err)
	}))
	if err != nil {
		return nil, fmt.Errorf("consume %s: %w", name, err)
	}
	return func() {
		cc.Stop()
		// Best effort: an ordered consumer also expires on its own.
		if info := oc.CachedInfo(); info != nil {
			dctx, cancel := context.WithTimeout(context.Background(), natsTimeout)
			defer cancel()
			_ = r.w.nats.js.DeleteConsumer(dctx, name, info.Name)
		}
	}, nil
}

// take hands one report to the ledger; an undecodable one is logged and
// counted.
func (r *reporter) take(msg jetstream.Msg) {
	st, err := events.DecodeStatus(msg.Data())
	if err != nil {
		r.w.metrics.reports.WithLabelValues("malformed").Inc()
		r.w.log.Warn("syncer report skipped", "subject", msg.Subject(), "err", err)
		return
	}
	at := time.Now()
	if md, err := msg.Metadata(); err == nil {
		at = md.Timestamp
	}
	r.w.metrics.reports.WithLabelValues("ok").Inc()
	r.mu.Lock()
	r.l.report(st, at)
	r.mu.Unlock()
	if r.changed != nil {
		r.changed()
	}
}

// post records what the ledger decides, on the Ingresses we still serve.
func (r *reporter) post(rec kuberecord.EventRecorder) {
	now := time.Now()
	r.mu.Lock()
	pruned := r.l.prune(now)
	due := append(r.l.due(now), r.extra...)
	r.extra = nil
	r.mu.Unlock()
	if pruned && r.changed != nil {
		r.changed()
	}
	for _, n := range due {
		obj := r.eventObject(n.Object)
		if obj == nil {
			continue
		}
		kind := corev1.EventTypeNormal
		if n.Warning {
			kind = corev1.EventTypeWarning
		}
		rec.Event(obj, kind, n.Reason, n.Message)
		r.w.log.Debug("object event", "kind", n.Object.Kind, "namespace", n.Object.Namespace, "name", n.Object.Name,
			"type", kind, "reason", n.Reason, "message", n.Message)
	}
}

// eventObject returns the object an Event on k goes to: an Ingress we
// still serve, an HTTPRoute (or a TLSRoute, TCPRoute, UDPRoute) that
// names a Gateway of ours, a Gateway of
// ours, or a ConfigMap we publish; nil for anything else.
func (r *reporter) eventObject(k objectKey) runtime.Object {
	src := r.w.informers.sources[k.Kind]
	if src == nil {
		return nil
	}
	obj, ok := src.get(key{Kind: k.Kind, Namespace: k.Namespace, Name: k.Name})
	if !ok {
		return nil
	}
	switch o := obj.(type) {
	case *networkingv1.Ingress:
		if o != nil && r.w.serves(o) {
			return o
		}
	case *corev1.ConfigMap:
		if o != nil {
			return o
		}
	case *gatewayv1.Gateway:
		if gateway.Ours(o, r.w.informers.gatewayClass, r.w.cfg.GatewayControllerName) {
			return o
		}
	case *gatewayv1.HTTPRoute:
		if r.w.RouteOurs(o) {
			return o
		}
	case *gatewayv1.GRPCRoute:
		if r.w.RouteOurs(gateway.HTTPView(o)) {
			return o
		}
	case *gatewayv1.TLSRoute, *gatewayv1.TCPRoute, *gatewayv1.UDPRoute:
		if r.streamRouteOurs(obj) {
			return obj
		}
	}
	return nil
}

// streamRouteOurs reports whether a parentRef of stream route obj names a
// cached Gateway of ours.
func (r *reporter) streamRouteOurs(obj runtime.Object) bool {
	parents, _, _ := gateway.StreamRouteRefs(obj)
	for i := range parents {
		ns, name, ok := gateway.ParentGateway(&parents[i], namespaceOf(obj))
		if ok && gateway.Ours(r.w.cachedGateway(ns, name), r.w.informers.gatewayClass, r.w.cfg.GatewayControllerName) {
			return true
		}
	}
	return false
}

// eventSink writes Events with a timeout on each call (client-go's own sink
// has none) and counts what reaches the API.
type eventSink struct {
	client kubernetes.Interface
	m      *metrics
	log    *slog.Logger
}

func (s *eventSink) Create(ev *corev1.Event) (*corev1.Event, error) {
	ctx, cancel := context.WithTimeout(context.Background(), natsTimeout)
	defer cancel()
	out, err := s.client.CoreV1().Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{})
	s.count(ev, "create", err)
	return out, err
}

// Update is never called by the recorder (it creates or patches); it is
// refused rather than needing the update verb.
func (s *eventSink) Update(*corev1.Event) (*corev1.Event, error) {
	return nil, errors.New("watch: events are never updated")
}

func (s *eventSink) Patch(ev *corev1.Event, data []byte) (*corev1.Event, error) {
	ctx, cancel := context.WithTimeout(context.Background(), natsTimeout)
	defer cancel()
	out, err := s.client.CoreV1().Events(ev.Namespace).Patch(ctx, ev.Name, types.StrategicMergePatchType, data, metav1.PatchOptions{})
	s.count(ev, "patch", err)
	return out, err
}

func (s *eventSink) count(ev *corev1.Event, call string, err error) {
	result := "ok"
	if err != nil {
		result = "error"
		s.log.Warn("kubernetes event write failed", "call", call, "namespace", ev.Namespace,
			"object", ev.InvolvedObject.Name, "reason", ev.Reason, "err", err)
	}
	s.m.kubeEvents.WithLabelValues(ev.Type, call, result).Inc()
}
