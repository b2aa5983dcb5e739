package ingress

import "strings"

// refuseSnippets is the Problem of an Ingress carrying *-snippet
// annotations (configuration-, server-, auth-, stream-, modsecurity-snippet
// or any other): snippets are raw nginx configuration, never applied
// whatever allow-snippet-annotations says, and the whole Ingress is left
// out (none of its rules, TLS or default backend) because a snippet may
// carry access rules that serving the rest without it would drop. This is
// what ingress-nginx does at its default annotations-risk-level, and it
// closes the IngressNightmare class of configuration injection.
func refuseSnippets(snippets []string) string {
	what := "annotation "
	if len(snippets) > 1 {
		what = "annotations "
	}
	return what + strings.Join(snippets, ", ") +
		": snippets are never applied (raw nginx configuration); the Ingress is not served, remove the snippet annotations to serve it"
}
