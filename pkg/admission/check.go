package admission

import (
	"fmt"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/ingress"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	networkingv1 "k8s.io/api/networking/v1"
)

// Verdict is what the webhook makes of one Ingress: the reasons it is
// refused (none: allowed) and the warnings returned either way.
type Verdict struct {
	Refusals []string
	Warnings []string
}

// Allowed reports whether the Ingress is admitted.
func (v Verdict) Allowed() bool { return len(v.Refusals) == 0 }

// Check translates ing with the Ingress source, as a syncer does when the
// Ingress enters its Store, and says what of it the build would leave
// unserved (refused) or serve with a difference (warned). When the entry
// has nothing to refuse and stands alone, the build of the Ingress alone
// (builtAlone) says what else it leaves unserved. It is pure.
func Check(src *ingress.Source, ing *networkingv1.Ingress) (Verdict, error) {
	key := intent.Key{Namespace: ing.Namespace, Name: ing.Name}
	e, err := src.Translate(events.KindIngress, key, ing)
	if err != nil {
		return Verdict{}, fmt.Errorf("%w: %w", ErrNotIngress, err)
	}
	var v Verdict
	if e.Refused != "" {
		v.Refusals = append(v.Refusals, e.Refused)
	}
	v.rules(e)
	v.tls(ing)
	for _, p := range e.Problems {
		v.problem(e, p)
	}
	for _, p := range e.CanaryNotes {
		v.problem(e, p)
	}
	v.differences(ing)
	if !v.Allowed() || !standsAlone(e) {
		return v, nil
	}
	unserved, err := builtAlone(e, ing)
	if err != nil {
		return Verdict{}, fmt.Errorf("%w: %w", ErrNotIngress, err)
	}
	v.Refusals = append(v.Refusals, unserved...)
	return v, nil
}

// problem refuses a Problem of the translation that leaves something
// unserved, as config.Problem.Unserved reads the build's report of it, and
// warns about the others.
func (v *Verdict) problem(e *intent.Entry, reason string) {
	p := config.Problem{Kind: e.Origin.Kind, Namespace: e.Origin.Namespace, Name: e.Origin.Name, Reason: reason}
	if p.Unserved() == config.ServedAsIs {
		v.Warnings = append(v.Warnings, reason)
		return
	}
	v.Refusals = append(v.Refusals, reason)
}

// rules refuses the hosts and paths the translator could not make a route
// of (the build leaves them out), naming the field. e.Rules has one Host
// per spec.rules item, in order, and one Path per path of its http.
func (v *Verdict) rules(e *intent.Entry) {
	for i := range e.Rules {
		r := &e.Rules[i]
		if r.Err != nil {
			v.Refusals = append(v.Refusals, fmt.Sprintf("spec.rules[%d].host %q %v; rule left out", i, r.Raw, r.Err))
			continue
		}
		for j := range r.Paths {
			p := &r.Paths[j]
			if p.Err != nil {
				v.Refusals = append(v.Refusals, fmt.Sprintf("spec.rules[%d].http.paths[%d].path %q (%s): %v; path left out", i, j, p.Raw, p.TypeName, p.Err))
			} else if p.Backend.Unsupported {
				v.Refusals = append(v.Refusals, fmt.Sprintf("spec.rules[%d].http.paths[%d].backend: only Service backends are supported; path left out", i, j))
			}
		}
	}
}

// tls refuses the TLS hosts the build leaves out, with its validator.
func (v *Verdict) tls(ing *networkingv1.Ingress) {
	for i, t := range ing.Spec.TLS {
		for j, h := range t.Hosts {
			if err := intent.ValidHost(h); err != nil {
				v.Refusals = append(v.Refusals, fmt.Sprintf("spec.tls[%d].hosts[%d] %q %v; left out", i, j, h, err))
			}
		}
	}
}

// differences warns about each annotation that is supported with a
// documented difference, with the registry's note.
func (v *Verdict) differences(ing *networkingv1.Ingress) {
	for _, k := range sortedKeys(ing.Annotations) {
		if !strings.HasPrefix(k, ingress.AnnotationPrefix) {
			continue
		}
		st, note := ingress.AnnotationStatus(k)
		if st == ingress.StatusSupportedWithDifference {
			v.Warnings = append(v.Warnings, fmt.Sprintf("annotation %s: %s (docs/migration.md): %s", k, st, note))
		}
	}
}
