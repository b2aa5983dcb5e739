package syncer

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"cmp"
	"slices"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// unservedObjects is the bounded list of route objects (those of
// routeKinds), and of Gateways (a listener port nginx cannot open: the
// watcher keeps the Gateway from Programmed), that the Problems say are
// not served as they ask, sorted by kind (Ingresses first), namespace and
// name.
func unservedObjects(ps []config.Problem, routeKinds map[string]bool) []events.UnservedIngress {
	why := make(map[[3]string]string)
	for _, p := range ps {
		if !routeKinds[p.Kind] && p.Kind != string(events.KindGateway) {
			continue
		}
		kind := p.Kind
		if kind == string(events.KindIngress) {
			kind = "" // as UnservedIngress.Kind says
		}
		k := [3]string{kind, p.Namespace, p.Name}
		switch w := unservedWhy(p); {
		case w == "":
		case w == events.UnservedRoutes || why[k] == "":
			why[k] = w
		}
	}
	out := make([]events.UnservedIngress, 0, len(why))
	for k, w := range why {
		out = append(out, events.UnservedIngress{Kind: k[0], Namespace: k[1], Name: k[2], Why: w})
	}
	slices.SortFunc(out, func(a, b events.UnservedIngress) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
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

// routeKindsOf returns the kinds that sources translate into entries.
func routeKindsOf(sources []intent.Source) map[string]bool {
	out := map[string]bool{}
	for _, k := range events.Kinds {
		for _, src := range sources {
			if _, route := src.Takes(k); route {
				out[string(k)] = true
			}
		}
	}
	return out
}
