// Package migrate checks Ingresses and the controller ConfigMap written for
// kubernetes/ingress-nginx against what ingress-sync does with them: the
// `syncer migrate-check` subcommand.
//
// The objects come from a directory of YAML or JSON manifests (ReadDir),
// from a cluster through a kubeconfig (ReadCluster) or from the ingress
// event stream (ReadStream). Check looks up every annotation and ConfigMap
// key in use in model's registry (supported, supported with a documented
// difference, refused, not supported, unknown), then runs the syncer's
// own builder (given as Options.NewBuilder) on the objects, as if their
// IngressClass had been switched to ingress-sync, and keeps the Problems
// it reports for them (invalid
// values, conflicts, missing references). The Report says whether anything
// would not behave as in ingress-nginx; the command then exits non-zero, so
// that it can gate a migration in CI.
//
// WriteTable renders the registry as the Markdown table of
// docs/migration.md.
package migrate
