package events

import "time"

// The stream the watcher publishes to and the syncers and tools read,
// unless told otherwise (their --stream and --subject-prefix flags).
const (
	// DefaultStream is the name of the event stream.
	DefaultStream = "INGRESS"
	// DefaultSubjectPrefix is the first token of every event subject (see
	// Subject).
	DefaultSubjectPrefix = "ingress"
)

// DefaultStatusInterval is how often a syncer publishes its SyncerStatus
// when nothing changes (it also reports after every apply). Readers take a
// syncer silent for a few intervals as gone.
const DefaultStatusInterval = 30 * time.Second
