package gateway

import (
	"crypto/tls"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// validPEMPair reports whether cert and key form a key pair crypto/tls
// accepts, as the build requires of a certificate it serves.
func validPEMPair(cert, key []byte) bool {
	if len(cert) == 0 || len(key) == 0 {
		return false
	}
	_, err := tls.X509KeyPair(cert, key)
	return err == nil
}

// MergeConditions returns the desired conditions with their
// lastTransitionTime: that of the existing condition of the same type
// when its status did not change, else now.
func MergeConditions(existing, desired []metav1.Condition, now metav1.Time) []metav1.Condition {
	out := make([]metav1.Condition, len(desired))
	for i, d := range desired {
		d.LastTransitionTime = now
		if j := slices.IndexFunc(existing, func(c metav1.Condition) bool { return c.Type == d.Type }); j >= 0 && existing[j].Status == d.Status {
			d.LastTransitionTime = existing[j].LastTransitionTime
		}
		out[i] = d
	}
	return out
}

// MergeGatewayStatus returns desired with the lastTransitionTimes of
// existing kept (MergeConditions), for the Gateway and each listener.
func MergeGatewayStatus(existing, desired gatewayv1.GatewayStatus, now metav1.Time) gatewayv1.GatewayStatus {
	out := *desired.DeepCopy()
	out.Conditions = MergeConditions(existing.Conditions, desired.Conditions, now)
	for i := range out.Listeners {
		var had []metav1.Condition
		if j := slices.IndexFunc(existing.Listeners, func(l gatewayv1.ListenerStatus) bool { return l.Name == out.Listeners[i].Name }); j >= 0 {
			had = existing.Listeners[j].Conditions
		}
		out.Listeners[i].Conditions = MergeConditions(had, desired.Listeners[i].Conditions, now)
	}
	return out
}

// MergeRouteParents returns the parents of a route's status with ours
// replaced by desired (controllerName controller; lastTransitionTimes
// kept by MergeConditions): the entries of other controllers stay as they
// are, ours stay in place while desired lists their parentRef, go when it
// does not, and the new ones come last.
func MergeRouteParents(existing, desired []gatewayv1.RouteParentStatus, controller string, now metav1.Time) []gatewayv1.RouteParentStatus {
	return mergeOurs(existing, desired, now, func(p *gatewayv1.RouteParentStatus) statusEntry {
		return statusEntry{string(p.ControllerName) == controller, p.ParentRef, &p.Conditions}
	})
}

// statusEntry is what mergeOurs reads of one entry of a status list:
// whether it is ours, its key, and its conditions.
type statusEntry struct {
	ours       bool
	key        any
	conditions *[]metav1.Condition
}

// mergeOurs returns deep copies of existing with our entries replaced by
// desired, as MergeRouteParents says; of tells of an entry.
func mergeOurs[T any, PT interface {
	*T
	DeepCopy() *T
}](existing, desired []T, now metav1.Time, of func(*T) statusEntry) []T {
	var out []T
	used := make([]bool, len(desired))
	for i := range existing {
		e := of(&existing[i])
		if !e.ours {
			out = append(out, *PT(&existing[i]).DeepCopy())
			continue
		}
		j := slices.IndexFunc(desired, func(d T) bool { return equality.Semantic.DeepEqual(e.key, of(&d).key) })
		if j < 0 || used[j] {
			continue
		}
		used[j] = true
		d := PT(&desired[j]).DeepCopy()
		*of(d).conditions = MergeConditions(*e.conditions, *of(d).conditions, now)
		out = append(out, *d)
	}
	for j := range desired {
		if !used[j] {
			d := PT(&desired[j]).DeepCopy()
			*of(d).conditions = MergeConditions(nil, *of(d).conditions, now)
			out = append(out, *d)
		}
	}
	return out
}
