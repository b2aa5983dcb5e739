package syncer

import (
	"cmp"
	"slices"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
)

// unservedIngresses is the bounded list of Ingresses the Problems say are
// not served as they ask, sorted by namespace and name.
func unservedIngresses(ps []model.Problem) []events.UnservedIngress {
	why := make(map[[2]string]string)
	for _, p := range ps {
		if p.Kind != string(events.KindIngress) {
			continue
		}
		k := [2]string{p.Namespace, p.Name}
		switch w := unservedWhy(p.Reason); {
		case w == "":
		case w == events.UnservedRoutes || why[k] == "":
			why[k] = w
		}
	}
	out := make([]events.UnservedIngress, 0, len(why))
	for k, w := range why {
		out = append(out, events.UnservedIngress{Namespace: k[0], Name: k[1], Why: w})
	}
	slices.SortFunc(out, func(a, b events.UnservedIngress) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out[:min(len(out), events.MaxReportedProblems)]
}

// unservedWhy says why a Problem of an Ingress leaves it unserved, "" when
// it does not. The marks are the words of pkg/model's Problem reasons that
// say so; any other Problem leaves out an annotation or a setting, and the
// Ingress is still served. TestUnservedFromBuilds pins them against real
// builds.
func unservedWhy(reason string) string {
	has := func(marks ...string) bool {
		return slices.ContainsFunc(marks, func(m string) bool { return strings.Contains(reason, m) })
	}
	switch {
	// A rule or path left out (invalid, its Service or port missing, or
	// lost to an older Ingress), routes that answer 503 until a Secret or
	// an annotation is fixed, an Ingress not served at all (snippets, a
	// canary without its main Ingress).
	case has("; rule left out", "; path left out", "routes answer 503", "not served", "): conflicts with Ingress "):
		return events.UnservedRoutes
	// A TLS host with the default certificate (its Secret missing or not
	// valid), or left out.
	case has("the default certificate is used"), strings.HasPrefix(reason, "tls host ") && strings.HasSuffix(reason, "; left out"):
		return events.UnservedCertificate
	}
	return ""
}
