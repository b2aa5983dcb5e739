package churn

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/test/testkit/gatewayapi"
	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
)

// TestKubeTargetUpdatesCustomResources: against a real kube-apiserver, the
// KubeTarget updates an HTTPRoute (a custom resource, which the API server
// updates only with its resourceVersion) after another writer changed it
// (as the watcher writes its status), and deletes it.
func TestKubeTargetUpdatesCustomResources(t *testing.T) {
	cp := testenv.Start(t)
	gatewayapi.InstallT(t, cp.Config())
	ctx := t.Context()
	if _, err := cp.Client(t).CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "app"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	target, err := NewKubeTarget(cp.Config(), 1)
	if err != nil {
		t.Fatal(err)
	}
	route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "r"}}
	route.Spec.Hostnames = []gatewayv1.Hostname{"a.example.com"}
	if _, err := target.Write(ctx, Change{Op: events.OpCreate, Object: route.DeepCopy()}); err != nil {
		t.Fatal(err)
	}
	// Another writer moves the resourceVersion on.
	gw := gatewayclient.NewForConfigOrDie(cp.Config())
	cur, err := gw.GatewayV1().HTTPRoutes("app").Get(ctx, "r", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Labels = map[string]string{"by": "another"}
	if _, err := gw.GatewayV1().HTTPRoutes("app").Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	route.Spec.Hostnames = []gatewayv1.Hostname{"b.example.com"}
	rv, err := target.Write(ctx, Change{Op: events.OpUpdate, Object: route.DeepCopy()})
	if err != nil {
		t.Fatalf("update without a resourceVersion: %v", err)
	}
	got, err := gw.GatewayV1().HTTPRoutes("app").Get(ctx, "r", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != rv || len(got.Spec.Hostnames) != 1 || got.Spec.Hostnames[0] != "b.example.com" {
		t.Fatalf("after the update: resourceVersion %s (Write said %s), hostnames %v", got.ResourceVersion, rv, got.Spec.Hostnames)
	}
	if _, err := target.Write(ctx, Change{Op: events.OpDelete, Object: route.DeepCopy()}); err != nil {
		t.Fatal(err)
	}
}
