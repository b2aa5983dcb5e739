// Package ingress is the translator of Kubernetes Ingresses with
// ingress-nginx's annotations and controller ConfigMap: its Source (see
// NewSource) turns each stored Ingress into one entry of route intents
// (pkg/intent), which the source-neutral build (pkg/model) places. It
// imports neither the build nor another translator (TestLayering in
// pkg/config).
//
// What it owns:
//
//   - The class rule (Serves): which Ingresses are served, by
//     spec.ingressClassName, the legacy annotation and the default
//     IngressClass, from the IngressClasses the source keeps.
//   - Hosts: a rule host is an exact name or a wildcard "*.foo.com" that
//     matches exactly one label; a rule without host goes to the default
//     server "_".
//   - Paths: Exact matches the path only. Prefix matches element-wise
//     ("/foo" matches "/foo", "/foo/" and "/foo/bar", not "/foobar"), case
//     sensitive; its trailing slash is ignored ("/foo/" is built as
//     "/foo"). ImplementationSpecific is built as Prefix, and an empty
//     ImplementationSpecific path as "/". Paths must be absolute and use
//     the allowed characters (letters, digits, -._~/%!&()*+,=:@). With
//     use-regex=true or a rewrite-target on the Ingress, its
//     ImplementationSpecific paths are regular expressions instead (tried
//     in Location order, longest first, after Exact paths and before
//     Prefix paths, as nginx tries ingress-nginx's regex locations).
//   - spec.tls (every rule host when a section lists none), and
//     spec.defaultBackend, which the build makes the one default backend
//     of the oldest served Ingress that has a valid one.
//   - The annotations: parseAnnotations sends each name to the parser of
//     its group that its registry entry names (registry.go,
//     annotations_groups.go); the registry is the one claim on a name and
//     also drives docs/migration.md and `syncer migrate-check`. A rejected
//     value is a Problem of the Ingress, which is still served; access
//     control fails closed.
//   - Canary Ingresses (canary: "true"): parsed here (canary.go), merged
//     into the main Ingresses' locations by the build.
//   - Snippets: an Ingress carrying any *-snippet annotation is refused as
//     a whole (snippet.go), whatever allow-snippet-annotations says.
//   - ingress-nginx's controller ConfigMap (global*.go): the Source is
//     also the Store's GlobalSource.
package ingress
