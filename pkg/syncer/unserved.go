package syncer

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"cmp"
	"slices"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// unservedIngresses is the bounded list of Ingresses the Problems say are
// not served as they ask, sorted by namespace and name.
func unservedIngresses(ps []config.Problem) []events.UnservedIngress {
	why := make(map[[2]string]string)
	for _, p := range ps {
		if p.Kind != string(events.KindIngress) {
			continue
		}
		k := [2]string{p.Namespace, p.Name}
		switch w := unservedWhy(p); {
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

// unservedWhy is the report's word for what p leaves unserved, "" when
// nothing (see config.Problem.Unserved).
func unservedWhy(p config.Problem) string {
	switch p.Unserved() {
	case config.RoutesUnserved:
		return events.UnservedRoutes
	case config.CertificateUnserved:
		return events.UnservedCertificate
	}
	return ""
}
