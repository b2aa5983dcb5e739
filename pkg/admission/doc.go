// Package admission is ingress-sync's validating admission webhook for
// Ingresses (admission.k8s.io/v1 AdmissionReview of networking.k8s.io/v1
// Ingresses, CREATE and UPDATE): `kubectl apply` of an Ingress that the
// syncers would leave unserved, or partly unserved, fails at once with the
// reason, before anything is stored.
//
// The checks are the translator's, not a second copy: Check translates the
// Ingress with the Ingress source (pkg/ingress) as a syncer does when the
// Ingress enters its Store, and reads the entry it makes:
//
//   - Entry.Refused (snippet annotations): refused.
//   - Rules[i].Err (a host that cannot be served) and
//     Rules[i].Paths[j].Err (a path that is not valid, a regular expression
//     that does not compile or means something else in nginx's PCRE):
//     refused, naming the field (spec.rules[i].host,
//     spec.rules[i].http.paths[j].path).
//   - Entry.Problems and Entry.CanaryNotes, each as the build reports it:
//     refused when config.Problem.Unserved says the Problem leaves routes
//     or certificates unserved (an access-control annotation that fails
//     closed, so the routes would answer 503), otherwise a warning (a value
//     the build leaves out and ignores, an annotation that is not
//     supported).
//   - spec.tls hosts, with intent.ValidHost as the build checks them: a
//     host the build would leave out is refused.
//   - Every annotation the registry marks "supported with a documented
//     difference" (ingress.AnnotationStatus) is a warning with its note.
//
// So the webhook refuses exactly what the build leaves unserved from the
// Ingress alone (FuzzReviewAgreesWithBuild checks it against model.Build).
// With Options.Neighbours (a Cache: informers on the Ingresses, indexed by
// host and path), Conflicts also refuses a host, path and path type that
// an older Ingress holds, or that the Ingress would take from a newer one:
// the build of the Ingress beside the stored Ingresses that may hold one of
// its paths, as model.Build gives each path to the oldest. What else depends
// on other objects (a missing Service or Secret) is not checked here and is
// reported by the syncers as before.
//
// Only the Ingresses of the controller's classes are checked (ingress.Serves
// with the IngressClasses the Options give); with no IngressClasses given
// (Options.IngressClasses nil) every Ingress is checked, since the webhook
// cannot know which are ours. The webhook never runs nginx and never renders
// nginx.conf: nothing of the Ingress reaches anything but the translator.
//
// Server serves the Handler over TLS from a certificate and key file (read
// again on every handshake, so a rotated Secret is picked up), with timeouts
// on every phase of a request.
package admission
