package events

// The stream the watcher publishes to and the syncers and tools read,
// unless told otherwise (their --stream and --subject-prefix flags).
const (
	// DefaultStream is the name of the event stream.
	DefaultStream = "INGRESS"
	// DefaultSubjectPrefix is the first token of every event subject (see
	// Subject).
	DefaultSubjectPrefix = "ingress"
)
