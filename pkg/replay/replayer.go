package replay

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// DefaultTimeout bounds each network call when Options.Timeout is 0.
const DefaultTimeout = 10 * time.Second

// GCPercent is the garbage collector setting `syncer replay` runs with
// (debug.SetGCPercent): a replay keeps a small live heap (one store and one
// Configuration) while it builds many short-lived ones, so collecting less
// often saves a fifth of its CPU at little memory cost.
const GCPercent = 400

// Options configure a Replayer.
type Options struct {
	// Stream is the event stream, e.g. "INGRESS"; SubjectPrefix its subject
	// prefix, e.g. "ingress".
	Stream        string
	SubjectPrefix string
	// NewBuilder returns an empty Builder for each timeline: the syncer's
	// builder with the flags it builds with (--controller-class,
	// --ingress-class, ...). Checksums equal a syncer's only with the same
	// flags; a syncer's generated fallback certificate is its own, so
	// compare with a syncer that has --default-ssl-certificate, or give
	// the same fallback certificate.
	NewBuilder func() Builder
	// Timeout bounds every network call (and every wait for the next
	// message); 0 means DefaultTimeout.
	Timeout time.Duration
	// Progress, when set, is called as messages are read: done of total
	// stream sequences.
	Progress func(done, total uint64)
}

// Replayer rebuilds past Configurations from the event stream.
type Replayer struct {
	js   jetstream.JetStream
	opts Options
	// verify (tests) checks every incremental step against a full Build.
	verify bool
}

func (r *Replayer) newEngine() *engine {
	e := newEngine(r.opts.NewBuilder())
	e.verify = r.verify
	return e
}

// New returns a Replayer reading through js. Options that cannot work are
// an error wrapping ErrInvalidOptions.
func New(js jetstream.JetStream, opts Options) (*Replayer, error) {
	if js == nil {
		return nil, fmt.Errorf("%w: no JetStream context", ErrInvalidOptions)
	}
	if opts.Stream == "" {
		return nil, fmt.Errorf("%w: no stream name", ErrInvalidOptions)
	}
	if err := events.ValidatePrefix(opts.SubjectPrefix); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	if opts.NewBuilder == nil {
		return nil, fmt.Errorf("%w: no builder", ErrInvalidOptions)
	}
	if opts.Timeout < 0 {
		return nil, fmt.Errorf("%w: negative timeout %s", ErrInvalidOptions, opts.Timeout)
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	return &Replayer{js: js, opts: opts}, nil
}

// progress reports that seq was read in [first, last].
func (r *Replayer) progress(seq, first, last uint64) {
	if r.opts.Progress != nil && last >= first {
		r.opts.Progress(min(seq, last)-first+1, last-first+1)
	}
}

// Skipped is a message that could not be decoded or applied; like the
// syncer, a replay skips it and goes on.
type Skipped struct {
	Sequence uint64 `json:"sequence"`
	Subject  string `json:"subject"`
	Error    string `json:"error"`
}
