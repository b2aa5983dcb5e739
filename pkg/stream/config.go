package stream

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// Stream defaults.
const (
	// DefaultHistory is the number of messages kept per subject (per
	// object) when Config.History is 0.
	DefaultHistory = 16
	// DefaultDuplicateWindow is the Nats-Msg-Id deduplication window when
	// Config.DuplicateWindow is 0.
	DefaultDuplicateWindow = 2 * time.Minute
	// MaxReplicas is the largest replication factor JetStream supports.
	MaxReplicas = 5

	// StatusHistory is the number of status reports kept per reporter.
	StatusHistory = 32
	// StatusMaxAge is how long a status report is kept: reporters that are
	// gone (deleted pods) disappear from the status stream after it.
	StatusMaxAge = 24 * time.Hour
)

// Config describes the event stream. Ensure also provisions a
// small companion status stream from it (see StatusStreamName).
type Config struct {
	Name          string // stream name, e.g. "INGRESS"
	SubjectPrefix string // events are on <prefix>.>, statuses on <prefix>-status.>
	Replicas      int    // 0 means 1; 3 in the clustered deployment
	// History is the number of messages kept per subject
	// (MaxMsgsPerSubject): 0 means DefaultHistory, -1 unlimited.
	History int64
	// MaxAge is 0 for no age limit, the default and the safe choice: an age
	// limit deletes the only message of an object that has not changed for
	// that long, and new syncers would then never learn about it.
	MaxAge time.Duration
	// DuplicateWindow is the Nats-Msg-Id deduplication window; 0 means
	// DefaultDuplicateWindow.
	DuplicateWindow time.Duration
}

// Validate checks c; errors wrap ErrInvalidConfig.
func (c Config) Validate() error {
	if err := c.validate(); err != nil {
		return fmt.Errorf("%w: stream %q: %s", ErrInvalidConfig, c.Name, err)
	}
	return nil
}

func (c Config) validate() error {
	switch {
	case c.Name == "" || strings.ContainsAny(c.Name, ">*. /\\") || strings.ContainsFunc(c.Name, isControl):
		return fmt.Errorf("invalid stream name")
	case events.ValidatePrefix(c.SubjectPrefix) != nil:
		return fmt.Errorf("invalid subject prefix %q", c.SubjectPrefix)
	case c.Replicas < 0 || c.Replicas > MaxReplicas:
		return fmt.Errorf("replicas %d not in 0..%d", c.Replicas, MaxReplicas)
	case c.History < -1:
		return fmt.Errorf("history %d: want -1 (unlimited), 0 (default) or more", c.History)
	case c.MaxAge < 0 || c.DuplicateWindow < 0:
		return fmt.Errorf("negative duration")
	case c.MaxAge > 0 && c.duplicateWindow() > c.MaxAge:
		return fmt.Errorf("duplicate window %s longer than max age %s", c.duplicateWindow(), c.MaxAge)
	}
	return nil
}

func isControl(r rune) bool { return r < ' ' || r == 0x7f }

func (c Config) duplicateWindow() time.Duration {
	if c.DuplicateWindow == 0 {
		return DefaultDuplicateWindow
	}
	return c.DuplicateWindow
}

// JetStreamConfig is the configuration Ensure applies to the event
// stream: file storage, limits retention, S2 compression, discard old.
func (c Config) JetStreamConfig() jetstream.StreamConfig {
	history := c.History
	if history == 0 {
		history = DefaultHistory
	}
	return jetstream.StreamConfig{
		Name:              c.Name,
		Description:       "ingress-sync events: " + events.FilterSubject(c.SubjectPrefix),
		Subjects:          []string{events.FilterSubject(c.SubjectPrefix)},
		Retention:         jetstream.LimitsPolicy,
		Storage:           jetstream.FileStorage,
		Discard:           jetstream.DiscardOld,
		Replicas:          max(c.Replicas, 1),
		MaxMsgsPerSubject: history,
		MaxAge:            c.MaxAge,
		Duplicates:        c.duplicateWindow(),
		Compression:       jetstream.S2Compression,
		AllowDirect:       true,
	}
}

// StatusStreamName is the name of the status stream of event stream name.
func StatusStreamName(name string) string { return name + "_STATUS" }

// StatusJetStreamConfig is the configuration of the status stream, which
// holds every subject under events.StatusPrefix (the syncer reports on
// events.StatusSubject). Status reports are published with plain core NATS
// publishes (or JetStream ones);
// the stream captures them either way, so live subscribers see them as core
// NATS messages and a reader that starts later (a new watcher leader) reads
// the last report of every reporter from the stream. It keeps
// StatusHistory reports per subject for StatusMaxAge.
func (c Config) StatusJetStreamConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              StatusStreamName(c.Name),
		Description:       "ingress-sync status reports: " + events.FilterSubject(events.StatusPrefix(c.SubjectPrefix)),
		Subjects:          []string{events.FilterSubject(events.StatusPrefix(c.SubjectPrefix))},
		Retention:         jetstream.LimitsPolicy,
		Storage:           jetstream.FileStorage,
		Discard:           jetstream.DiscardOld,
		Replicas:          max(c.Replicas, 1),
		MaxMsgsPerSubject: StatusHistory,
		MaxAge:            StatusMaxAge,
		Duplicates:        DefaultDuplicateWindow,
		AllowDirect:       true,
	}
}

// Ensure creates the event stream described by cfg, or updates it to
// cfg when it exists (a changed History, MaxAge, Replicas or duplicate
// window), and does the same for its status stream. Calling it again with
// the same cfg changes nothing. It returns the event stream. Changes that
// JetStream cannot apply to an existing stream (such as a different storage
// type made by hand) are errors. Each call is bounded by DefaultTimeout
// unless ctx has a deadline.
func Ensure(ctx context.Context, js jetstream.JetStream, cfg Config) (jetstream.Stream, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s, err := ensure(ctx, js, cfg.JetStreamConfig())
	if err != nil {
		return nil, err
	}
	if _, err := ensure(ctx, js, cfg.StatusJetStreamConfig()); err != nil {
		return nil, err
	}
	return s, nil
}

func ensure(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	ctx, cancel := bounded(ctx, DefaultTimeout)
	defer cancel()
	s, err := js.CreateOrUpdateStream(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("stream: ensure stream %s: %w", cfg.Name, err)
	}
	return s, nil
}
