package syncer

import (
	"github.com/ingress-sync/ingress-sync/pkg/gateway"
	"github.com/ingress-sync/ingress-sync/pkg/ingress"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
)

// Options configure a Syncer. Zero durations take the defaults.
type Options struct {
	Model model.Options
	// Sources returns new translators of the route objects, one per API,
	// for each Store the syncer makes (cmd/syncer's sources); nil means
	// Ingress, and Gateway API with the default controller name.
	Sources func() []intent.Source
	// Pod names this syncer in its status reports.
	Pod string
	// Holdoff is how long the syncer waits after an event for more to come
	// before it rebuilds; MaxHoldoff bounds the wait under a steady stream.
	Holdoff    time.Duration // default 5ms
	MaxHoldoff time.Duration // default 100ms
	// RetryMin and RetryMax bound the backoff after a failed apply.
	RetryMin time.Duration // default 250ms
	RetryMax time.Duration // default 30s
	// ApplyTimeout bounds one apply, including the first start of nginx.
	ApplyTimeout time.Duration // default 2m
	// StatusInterval is how often status is reported when nothing changes.
	StatusInterval time.Duration // default events.DefaultStatusInterval
	// ListenCheck tells whether nginx can listen on the port of a TCP or
	// UDP service (or of a Gateway listener, given as a TCP service); the
	// services and listener ports it refuses are left out with a Problem
	// (model.WithoutListeners). nil checks nothing. The real one is
	// Nginx.CanListen.
	ListenCheck func(config.L4Service) error
	// Observe, when set, is told of every apply (not of the builds
	// skipped as equal): next, whether it reloaded nginx (nginx.conf
	// changed, or the first apply, which starts nginx) and its error.
	// ControllerMetrics.Observe is one.
	Observe func(next *config.Configuration, reload bool, err error)
	// Report publishes a status report; nil reports nothing.
	Report     func(ctx context.Context, st events.SyncerStatus) error
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

// ErrInvalidOptions is returned by New for options out of range.
var ErrInvalidOptions = errors.New("syncer: invalid options")

func (o *Options) setDefaults() error {
	if o.Sources == nil {
		o.Sources = func() []intent.Source {
			return []intent.Source{ingress.NewSource(), gateway.NewSource(gateway.DefaultControllerName)}
		}
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.Holdoff, 5*time.Millisecond)
	def(&o.MaxHoldoff, 100*time.Millisecond)
	def(&o.RetryMin, 250*time.Millisecond)
	def(&o.RetryMax, 30*time.Second)
	def(&o.StatusInterval, events.DefaultStatusInterval)
	def(&o.ApplyTimeout, 2*time.Minute)
	switch {
	case o.Holdoff < 0 || o.MaxHoldoff < o.Holdoff:
		return fmt.Errorf("%w: need 0 <= holdoff (%v) <= max-holdoff (%v)", ErrInvalidOptions, o.Holdoff, o.MaxHoldoff)
	case o.RetryMin <= 0 || o.RetryMax < o.RetryMin:
		return fmt.Errorf("%w: need 0 < retry-min (%v) <= retry-max (%v)", ErrInvalidOptions, o.RetryMin, o.RetryMax)
	case o.Pod == "":
		return fmt.Errorf("%w: pod name is empty", ErrInvalidOptions)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Registerer == nil {
		o.Registerer = prometheus.NewRegistry()
	}
	return nil
}

// Syncer consumes events into a store and keeps nginx serving the
// Configuration built from it. It implements stream.Handler; run it with
// Start beside a stream.Consumer that calls it.
type Syncer struct {
	opts    Options
	applier Applier
	log     *slog.Logger
	m       *metrics
	trigger chan struct{}
	// routeKinds are the kinds its sources translate into routes (the
	// unserved reports name objects of these kinds).
	routeKinds map[string]bool

	mu       sync.Mutex         // guards the fields below, written by the consumer
	inc      *model.Incremental // its Store holds the events applied
	seq      uint64             // last stream sequence applied to the store
	caughtUp bool               // bootstrap done
	observed []time.Time        // ObservedAt of live events not yet applied
	// next holds the bootstrap of a recreated stream until it is caught
	// up (then it replaces inc); nil otherwise. nextSeq is its sequence.
	next    *model.Incremental
	nextSeq uint64

	// Owned by the Start goroutine; read by Status under stateMu. running
	// is the last Configuration applied: decide diffs the next build from
	// it, and Running returns it.
	stateMu sync.Mutex
	running *config.Configuration
	state   events.SyncerStatus
}

// maxLagSamples bounds the lag samples kept between two builds.
const maxLagSamples = 4096

// New returns a Syncer that applies through a.
func New(a Applier, opts Options) (*Syncer, error) {
	if a == nil {
		return nil, fmt.Errorf("%w: nil applier", ErrInvalidOptions)
	}
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	s := &Syncer{
		opts: opts, applier: a, log: opts.Logger, m: newMetrics(opts.Registerer),
		trigger: make(chan struct{}, 1), routeKinds: routeKindsOf(opts.Sources()), inc: model.NewIncremental(model.NewStore(opts.Sources()...), opts.Model),
	}
	s.state.Pod = opts.Pod
	return s, nil
}

// HandleEvent applies one event to the store and schedules a rebuild. An
// event the store refuses is logged, counted and skipped.
func (s *Syncer) HandleEvent(_ context.Context, ev events.Event) error {
	s.mu.Lock()
	err := s.apply(ev)
	rebuilding := s.next != nil
	s.mu.Unlock()
	if err != nil {
		s.m.storeErrors.Inc()
		s.log.Error("event skipped", "seq", ev.Sequence, "subject", ev.Subject, "kind", ev.Kind, "key", ev.Key(), "err", err)
		return nil
	}
	s.m.events.WithLabelValues(string(ev.Kind)).Inc()
	if !rebuilding {
		s.poke()
	}
	return nil
}

// apply puts ev in the store it belongs to: the one served, or the
// bootstrap of a recreated stream. s.mu is held.
func (s *Syncer) apply(ev events.Event) error {
	if s.next != nil {
		_, err := s.next.Apply(ev)
		s.nextSeq = max(s.nextSeq, ev.Sequence)
		return err
	}
	_, err := s.inc.Apply(ev)
	s.seq = max(s.seq, ev.Sequence)
	if err == nil && s.caughtUp && !ev.ObservedAt.IsZero() && len(s.observed) < maxLagSamples {
		s.observed = append(s.observed, ev.ObservedAt)
	}
	return err
}

// StreamRecreated is the consumer's hook for a stream deleted and created
// again (stream.WithStreamRecreated): the events of the new stream's
// bootstrap go into a store of their own, and the running configuration
// keeps serving, until CaughtUp makes that store the one served. The first
// build from it is applied as an ordinary diff, so that nothing still in
// the new stream is ever removed in between.
func (s *Syncer) StreamRecreated(context.Context) {
	s.mu.Lock()
	s.next, s.nextSeq = model.NewIncremental(model.NewStore(s.opts.Sources()...), s.opts.Model), 0
	s.mu.Unlock()
	s.m.streamRecreated.Inc()
	s.log.Warn("event stream recreated: serving the running configuration until its bootstrap is caught up")
}

// CaughtUp marks the end of the bootstrap: the first build follows.
func (s *Syncer) CaughtUp(context.Context) {
	s.mu.Lock()
	first, swapped := !s.caughtUp, s.next != nil
	s.caughtUp = true
	if swapped {
		s.inc, s.seq, s.observed = s.next, s.nextSeq, nil
		s.next, s.nextSeq = nil, 0
	}
	objects, seq := s.inc.Store().Len(), s.seq
	s.mu.Unlock()
	switch {
	case first:
		s.m.caughtUp.Set(1)
		s.log.Info("stream bootstrap caught up", "objects", objects)
	case swapped:
		s.log.Info("recreated stream bootstrap caught up", "objects", objects, "seq", seq)
	}
	s.poke()
}

// DecodeError is the consumer's hook for messages that cannot be decoded.
// The message still counts as consumed: the status sequence moves past it.
func (s *Syncer) DecodeError(seq uint64, subject string, err error) {
	s.m.decodeErrors.Inc()
	s.log.Error("undecodable message skipped", "seq", seq, "subject", subject, "err", err)
	s.mu.Lock()
	rebuilding := s.next != nil
	if rebuilding {
		s.nextSeq = max(s.nextSeq, seq)
	} else {
		s.seq = max(s.seq, seq)
	}
	s.mu.Unlock()
	if !rebuilding {
		s.poke()
	}
}

// Ready reports whether a Configuration has been applied.
func (s *Syncer) Ready() bool { return s.Status().Ready }

// Status returns the latest status report.
func (s *Syncer) Status() events.SyncerStatus {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	return s.state
}

// Running returns the last Configuration applied (the one nginx serves),
// or nil before the first apply. It must not be modified.
func (s *Syncer) Running() *config.Configuration {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	return s.running
}

func (s *Syncer) poke() {
	select {
	case s.trigger <- struct{}{}:
	default:
	}
}
