// Package intent is what the translators of the route APIs (pkg/ingress
// for Ingress, pkg/gateway for the Gateway API) hand the source-neutral build
// (pkg/model): route intents, in terms that know nothing of the API they
// came from. It depends on the Configuration contract (pkg/config) alone.
//
// One stored object of a source becomes one Entry: its Origin (kind,
// namespace, name, generation), which Problems and the unserved reports
// name; its hosts, each with its paths and their backend references
// (Host, Path, BackendRef); the hosts it asks certificates for (TLS); a
// default backend; and its Settings, the per-route and per-backend
// settings already parsed and validated (Location holds those the
// Configuration carries as they are; the others name Secrets and
// ConfigMaps that the build resolves). What the translator rejected is in
// Entry.Problems; an entry it refuses altogether has Entry.Refused.
//
// The value validators here (hosts, paths, regular expressions, header
// names, URLs, limits) are the one copy that every translator and the
// build use: a Gateway API header match and an Ingress canary header
// pattern take the same validator.
//
// # What a source provides
//
// A translator implements Source (and, for ingress-nginx's controller
// ConfigMap, GlobalSource) and is given to model.NewStore. The build then
// relies on these properties, which the Incremental's per-host rebuilds
// (model/incremental_hosts.go) need to stay equal to a full Build:
//
//   - Translate is pure and made once, when the object is stored: the
//     same object gives an equal Entry, and an Entry is never modified
//     afterwards (the Store keeps the one an event replaces, to know the
//     hosts it left).
//   - Entry.Origin.Kind is the object's event kind and Entry.Key its
//     namespace/name: the Store keys entries by both.
//   - Entry.Hosts lists every host whose Server or certificate the entry
//     can change: its hosts, its TLS hosts, and the default server
//     (config.DefaultServerName) for a default backend. An entry change
//     rebuilds the island of those hosts: every entry sharing one, and so
//     on; an entry that lists too few hosts makes the Incremental differ
//     from Build. TestIncrementalEqualsBuild (pkg/model) checks the two
//     after every step of random event sequences; a new source adds its
//     objects to the events it draws.
//   - Entry.Services, Secrets and ConfigMaps list every object its
//     translation or its settings name, so that a change of one rebuilds.
//   - Settings that the build decides across hosts (a default backend,
//     server aliases, www redirects, passthrough, backend TLS profiles, a
//     backend's balancing or service-upstream, error backends) are read
//     from Settings as they are: an entry with any makes its changes a
//     full Build, with no more from the source.
//   - Serving decides which entries are served from the entry and the
//     objects the source keeps (Keep) alone; a change of a kept object
//     can change any entry's fate, so the next Configuration is a full
//     Build.
//
// A source whose routes depend on its other objects (a Gateway API route
// on its Gateway's listeners) translates a route again when one of those
// changes: Keep returns the entries it made again, and the Store replaces
// them; such a change is a full Build. TestSecondSource (pkg/model) builds
// a source of that shape beside Ingress.
package intent
