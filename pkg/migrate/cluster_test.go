package migrate

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
)

// TestCluster reads the corpus back from a real kube-apiserver through a
// kubeconfig, as the command does: every namespace, then one.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("needs kube-apiserver and etcd (make controlplane); not run with -short")
	}
	cp := testenv.Start(t)
	client := cp.Client(t)
	in, err := ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	createAll(t, client, in.Objects)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	o := ClusterOptions{ConfigMap: DefaultConfigMap, Timeout: testTimeout}
	got, err := ReadKubeconfig(t.Context(), kubeconfig, o)
	if err != nil {
		t.Fatalf("ReadKubeconfig: %v", err)
	}
	checkLikeDir(t, "cluster", got, in)

	o.Namespace = "shop"
	got, err = ReadCluster(t.Context(), client, o)
	if err != nil {
		t.Fatalf("ReadCluster: %v", err)
	}
	if r, err := Check(got, Options{IngressClass: "nginx", ConfigMap: DefaultConfigMap, NewBuilder: testBuilder}); err != nil || r.Ingresses != 2 || r.ConfigMap == "" {
		t.Errorf("namespace shop: %v, %d Ingresses, ConfigMap %q; want 2 and the ConfigMap", err, r.Ingresses, r.ConfigMap)
	}
}

// createAll creates the namespaces of objs, then objs.
func createAll(t *testing.T, client kubernetes.Interface, objs []runtime.Object) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	namespaces := map[string]bool{}
	for _, obj := range objs {
		ns := obj.(metav1.Object).GetNamespace()
		if ns == "" || namespaces[ns] {
			continue
		}
		namespaces[ns] = true
		if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create namespace %s: %v", ns, err)
		}
	}
	for _, obj := range objs {
		if err := create(ctx, client, obj); err != nil {
			t.Fatalf("create %T %s: %v", obj, obj.(metav1.Object).GetName(), err)
		}
	}
}

func create(ctx context.Context, client kubernetes.Interface, obj runtime.Object) error {
	var err error
	opts := metav1.CreateOptions{}
	switch v := obj.(type) {
	case *networkingv1.Ingress:
		_, err = client.NetworkingV1().Ingresses(v.Namespace).Create(ctx, v, opts)
	case *networkingv1.IngressClass:
		_, err = client.NetworkingV1().IngressClasses().Create(ctx, v, opts)
	case *corev1.Service:
		_, err = client.CoreV1().Services(v.Namespace).Create(ctx, v, opts)
	case *corev1.Secret:
		_, err = client.CoreV1().Secrets(v.Namespace).Create(ctx, v, opts)
	case *corev1.ConfigMap:
		_, err = client.CoreV1().ConfigMaps(v.Namespace).Create(ctx, v, opts)
	default:
		err = fmt.Errorf("unexpected %T", obj)
	}
	return err
}
