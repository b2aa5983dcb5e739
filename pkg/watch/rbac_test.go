package watch_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
)

// TestDeployRBACIsEnough runs the watcher as a service account holding only
// the rules of deploy/base/watcher/rbac.yaml: it elects itself, publishes
// (TLS Secrets and a named ConfigMap, by field selector, its Namespace and
// the Gateway API kinds), writes Ingress and Gateway API status, keeps the Service of a
// Gateway and creates and patches Events.
func TestDeployRBACIsEnough(t *testing.T) {
	ge := newGatewayEnv(t, true)
	e := ge.env
	ctx, ns := t.Context(), e.ns
	bindDeployRBAC(t, e, nil)
	saConfig, err := controlPlane.ServiceAccountConfig(ctx, ns, "ingress-sync-watcher")
	if err != nil {
		t.Fatal(err)
	}
	cfg := e.config("watcher-a")
	cfg.Client, cfg.RESTConfig = kubernetes.NewForConfigOrDie(saConfig), saConfig
	cfg.LeaderElect, cfg.ElectionNamespace = true, ns // election id: the default, named in the Role
	cfg.PublishStatusAddress = []string{"198.18.0.10"}
	cfg.IngressClass = "nginx-" + ns
	cfg.GatewayClient, cfg.GatewayAPIPollInterval = gatewayclient.NewForConfigOrDie(saConfig), 200*time.Millisecond
	cfg.GatewayControllerName = ge.gatewayController()
	cfg.GatewayServiceSelector, cfg.GatewayServiceType = "app.kubernetes.io/component=syncer", corev1.ServiceTypeClusterIP
	w := start(t, cfg)
	eventually(t, "every Gateway API kind watched", func() bool {
		return w.metric(t, "ingress_sync_watcher_gateway_api_kinds_watched") == float64(len(events.GatewayKinds))
	})
	ge.createGateway(t, gatewayClass(ge.class(), ge.gatewayController()))
	ge.createGateway(t, httpRoute(ns, "web", "edge"))
	ge.createGateway(t, gateway(ns, "edge", ge.class()))
	ge.createGateway(t, referenceGrant(ns, "grant", "infra"))
	ge.createGateway(t, backendTLSPolicy(ns, "btls", "web", "ca"))
	names := map[events.Kind]string{events.KindGatewayClass: ge.class(), events.KindHTTPRoute: "web",
		events.KindGateway: "edge", events.KindReferenceGrant: "grant", events.KindBackendTLSPolicy: "btls"}
	for kind, name := range names {
		e.waitMessage(t, ge.gatewaySubject(kind, ns, name), events.OpCreate)
	}
	ge.waitRoute(t, ns, "web", "Accepted=True/Accepted@1 ResolvedRefs=False/BackendNotFound@1")
	eventually(t, "the Gateway's status and Service", func() bool {
		acc, _ := ge.gatewayCond(t, ns, "edge", "Accepted")
		return acc == "Accepted=True/Accepted@1"
	})
	serviceName(t, ge, "edge")

	e.create(t, tlsSecret(ns, "tls"))
	e.create(t, configMap(ns, "ingress-sync", map[string]string{"k": "v"}))
	e.create(t, newIngress(ns, "web", cfg.IngressClass, "web"))
	e.waitMessage(t, e.subject(events.KindSecret, "tls"), events.OpCreate)
	e.waitMessage(t, e.subject(events.KindConfigMap, "ingress-sync"), events.OpCreate)
	e.waitMessage(t, e.subject(events.KindIngress, "web"), events.OpCreate)
	e.waitMessage(t, events.Subject(prefix, events.KindNamespace, "", ns), events.OpCreate)
	publishReport(t, e, reportOf("syncer-a", e.lastSeq(t))) // a syncer serves it
	waitStatus(t, e, "web", []string{"198.18.0.10"})
	postsEvents(t, e, w, "web")
}

// postsEvents checks that w can create and patch Events: 12 Problems of one
// Ingress make client-go fold the last ones into a repeat, a patch.
func postsEvents(t *testing.T, e *env, w *runningWatcher, name string) {
	t.Helper()
	seq := e.lastSeq(t)
	for i := range 12 {
		publishReport(t, e, reportOf(fmt.Sprintf("syncer-%d", i), seq, problem(e.ns, name, fmt.Sprintf("problem %d", i))))
	}
	eventually(t, "Events created and patched", func() bool {
		return w.metric(t, "ingress_sync_watcher_kube_events_total", "call", "patch", "result", "ok") >= 1
	})
	if n := w.metric(t, "ingress_sync_watcher_kube_events_total", "result", "error"); n != 0 {
		t.Errorf("%v Event writes refused", n)
	}
}

// bindDeployRBAC creates the ClusterRole, Role and bindings of the watcher's
// deploy manifest for the service account ingress-sync-watcher of the test
// namespace (the cluster-scoped ones renamed after the namespace), without
// the rules drop (when not nil) says to leave out.
func bindDeployRBAC(t *testing.T, e *env, drop func(rbacv1.PolicyRule) bool) {
	t.Helper()
	root, err := testenv.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, "deploy", "base", "watcher", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rbac := e.client.RbacV1()
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: e.ns, Name: "ingress-sync-watcher"}}
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var doc struct {
			Kind  string              `json:"kind"`
			Rules []rbacv1.PolicyRule `json:"rules"`
		}
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			t.Fatalf("rbac.yaml: %v", err)
		}
		if drop != nil {
			doc.Rules = slices.DeleteFunc(doc.Rules, drop)
		}
		name := "ingress-sync-watcher"
		meta := metav1.ObjectMeta{Name: name}
		switch doc.Kind {
		case "ClusterRole":
			meta.Name = name + "-" + e.ns
			_, err = rbac.ClusterRoles().Create(t.Context(), &rbacv1.ClusterRole{ObjectMeta: meta, Rules: doc.Rules}, createOpts)
			t.Cleanup(func() { _ = rbac.ClusterRoles().Delete(context.Background(), meta.Name, deleteOpts) })
		case "ClusterRoleBinding":
			meta.Name = name + "-" + e.ns
			ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: meta.Name}
			_, err = rbac.ClusterRoleBindings().Create(t.Context(), &rbacv1.ClusterRoleBinding{ObjectMeta: meta, RoleRef: ref, Subjects: subjects}, createOpts)
			t.Cleanup(func() { _ = rbac.ClusterRoleBindings().Delete(context.Background(), meta.Name, deleteOpts) })
		case "Role":
			meta.Namespace = e.ns
			_, err = rbac.Roles(e.ns).Create(t.Context(), &rbacv1.Role{ObjectMeta: meta, Rules: doc.Rules}, createOpts)
		case "RoleBinding":
			meta.Namespace = e.ns
			ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}
			_, err = rbac.RoleBindings(e.ns).Create(t.Context(), &rbacv1.RoleBinding{ObjectMeta: meta, RoleRef: ref, Subjects: subjects}, createOpts)
		}
		if err != nil {
			t.Fatalf("create %s: %v", doc.Kind, err)
		}
	}
}

// TestGatewayAPIForbiddenDoesNotBlock: a watcher whose RBAC lacks the
// gateway.networking.k8s.io rules (a chart older than the binary) says so
// in its log and publishes the Ingress inputs as before.
func TestGatewayAPIForbiddenDoesNotBlock(t *testing.T) {
	ge := newGatewayEnv(t, true)
	e := ge.env
	bindDeployRBAC(t, e, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.APIGroups, "gateway.networking.k8s.io") })
	saConfig, err := controlPlane.ServiceAccountConfig(t.Context(), e.ns, "ingress-sync-watcher")
	if err != nil {
		t.Fatal(err)
	}
	cfg := e.config("watcher-a")
	cfg.Client, cfg.RESTConfig = kubernetes.NewForConfigOrDie(saConfig), saConfig
	cfg.GatewayClient, cfg.GatewayAPIPollInterval = gatewayclient.NewForConfigOrDie(saConfig), 200*time.Millisecond
	w := start(t, cfg)
	e.create(t, service(e.ns, "web"))
	e.waitMessage(t, e.subject(events.KindService, "web"), events.OpCreate)
	eventually(t, "the refused Gateway API list logged", func() bool {
		return len(w.logs.lines("not allowed to list and watch a Gateway API kind")) >= len(events.GatewayKinds)
	})
}

// TestNamespacesForbiddenDoesNotBlock: a watcher whose RBAC lacks the rule
// on namespaces (a chart older than the binary) says so in its log and
// publishes the other inputs as before.
func TestNamespacesForbiddenDoesNotBlock(t *testing.T) {
	e := newEnv(t)
	bindDeployRBAC(t, e, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, "namespaces") })
	saConfig, err := controlPlane.ServiceAccountConfig(t.Context(), e.ns, "ingress-sync-watcher")
	if err != nil {
		t.Fatal(err)
	}
	cfg := e.config("watcher-a")
	cfg.Client, cfg.RESTConfig = kubernetes.NewForConfigOrDie(saConfig), saConfig
	w := start(t, cfg)
	e.create(t, service(e.ns, "web"))
	e.waitMessage(t, e.subject(events.KindService, "web"), events.OpCreate)
	eventually(t, "the refused Namespace list logged", func() bool {
		return len(w.logs.lines("not allowed to list and watch namespaces")) == 1
	})
	if msgs := e.namespaceMessages(t, e.ns); len(msgs) != 0 {
		t.Errorf("a Namespace published without the rule: %v", msgs)
	}
}
