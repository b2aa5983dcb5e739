package deploy

import (
	"fmt"
	"github.com/ingress-sync/ingress-sync/test/testkit/golden"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestRBACGolden: the roles and bindings of every kustomization are exactly
// those in testdata/rbac.golden. A change of privileges shows up as a diff
// of that file in review.
func TestRBACGolden(t *testing.T) {
	for _, dir := range kustomizations {
		golden.Check(t, "rbac", []byte(rbacSummary(t, render(t, dir))), "privileges changed in "+dir+":")
	}
}

// rbacSummary is a sorted text form of every Role, ClusterRole and binding.
func rbacSummary(t *testing.T, objs []*unstructured.Unstructured) string {
	var b strings.Builder
	for _, o := range objs {
		switch o.GetKind() {
		case "ClusterRole", "Role":
			r := typed[rbacv1.ClusterRole](t, o)
			fmt.Fprintf(&b, "%s %s\n", o.GetKind(), qualified(o))
			for _, line := range ruleLines(r.Rules) {
				fmt.Fprintf(&b, "  %s\n", line)
			}
			if r.AggregationRule != nil {
				fmt.Fprintf(&b, "  aggregation %v\n", r.AggregationRule.ClusterRoleSelectors)
			}
		case "ClusterRoleBinding", "RoleBinding":
			rb := typed[rbacv1.RoleBinding](t, o)
			fmt.Fprintf(&b, "%s %s -> %s %s\n", o.GetKind(), qualified(o), rb.RoleRef.Kind, rb.RoleRef.Name)
			for _, s := range rb.Subjects {
				fmt.Fprintf(&b, "  %s %s/%s\n", s.Kind, s.Namespace, s.Name)
			}
		}
	}
	return b.String()
}

func qualified(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

// ruleLines writes one line per rule, "group resource[names]: verbs",
// sorted, with "core" for the empty group.
func ruleLines(rules []rbacv1.PolicyRule) []string {
	var lines []string
	for _, r := range rules {
		groups := slices.Clone(r.APIGroups)
		for i, g := range groups {
			if g == "" {
				groups[i] = "core"
			}
		}
		line := strings.Join(groups, ",") + " " + strings.Join(r.Resources, ",")
		if len(r.ResourceNames) > 0 {
			line += " [" + strings.Join(r.ResourceNames, ",") + "]"
		}
		if len(r.NonResourceURLs) > 0 {
			line += " urls " + strings.Join(r.NonResourceURLs, ",")
		}
		lines = append(lines, line+": "+strings.Join(r.Verbs, ","))
	}
	slices.Sort(lines)
	return lines
}
