package testenv

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/tools/clientcmd/api/latest"
)

func TestOptionsValidate(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		opts    Options
		wantErr bool
	}{
		{name: "zero value", opts: Options{BinDir: dir}},
		{name: "netns advertise address", opts: Options{BinDir: dir, AdvertiseAddress: "198.18.0.254"}},
		{name: "loopback advertise address", opts: Options{BinDir: dir, AdvertiseAddress: "127.0.0.1"}, wantErr: true},
		{name: "unspecified advertise address", opts: Options{BinDir: dir, AdvertiseAddress: "0.0.0.0"}, wantErr: true},
		{name: "not an IP", opts: Options{BinDir: dir, AdvertiseAddress: "apiserver.local"}, wantErr: true},
		{name: "negative timeout", opts: Options{BinDir: dir, StartTimeout: -1}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.validate()
			if (err != nil) != tc.wantErr {
				t.Fatalf("validate() = %v, want error %v", err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, ErrInvalidOptions) {
				t.Errorf("error %v is not ErrInvalidOptions", err)
			}
		})
	}
}

func TestRunWithoutBinaries(t *testing.T) {
	_, err := Run(t.Context(), Options{BinDir: t.TempDir()})
	if !errors.Is(err, ErrNoBinaries) {
		t.Fatalf("Run() = %v, want ErrNoBinaries", err)
	}
	if !strings.Contains(err.Error(), "make controlplane") {
		t.Errorf("error %q does not say how to get the binaries", err)
	}
}

func TestNamespacePrefix(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{name: "simple", in: "TestWatch", want: "testwatch-"},
		{name: "subtest", in: "TestWatch/Service_create", want: "testwatch-service-create-"},
		{name: "long", in: strings.Repeat("a", 80), want: strings.Repeat("a", maxPrefix) + "-"},
		{name: "leading digit", in: "9lives", want: "t9lives-"},
		{name: "only symbols", in: "//", want: "t-"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := namespacePrefix(tc.in); got != tc.want {
				t.Errorf("namespacePrefix(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestRepoRoot(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := RepoRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Errorf("RepoRoot(%s) = %s without go.mod", wd, root)
	}
	if rel, err := RepoRoot("."); err != nil || rel != root {
		t.Errorf("RepoRoot(\".\") = %q, %v; want %q", rel, err, root)
	}
	if _, err := RepoRoot(t.TempDir()); err == nil {
		t.Error("RepoRoot of a folder outside any module succeeded")
	}
}

// TestControlPlane starts the real kube-apiserver and etcd and checks what
// tests rely on: the version, the admin token, namespaces, the kubeconfig and
// a less privileged service account subject to RBAC.
func TestControlPlane(t *testing.T) {
	cp := Start(t)
	client := cp.Client(t)
	v, err := client.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("server version: %v", err)
	}
	if v.GitVersion != "v1.37.2" {
		t.Errorf("server version %s, want v1.37.2", v.GitVersion)
	}
	ns := NewNamespace(t, client)
	if !strings.HasPrefix(ns, "testcontrolplane-") {
		t.Errorf("namespace %q not named after the test", ns)
	}
	t.Run("kubeconfig", func(t *testing.T) { checkKubeconfig(t, cp) })
	t.Run("service account RBAC", func(t *testing.T) { checkServiceAccount(t, cp, client, ns) })
	t.Run("kube-apiserver restart", func(t *testing.T) { checkAPIServerRestart(t, cp, client, ns) })
}

// checkAPIServerRestart: StopAPIServer makes the API unreachable;
// StartAPIServer brings it back at the same URL, with the same certificate
// and data.
func checkAPIServerRestart(t *testing.T, cp *ControlPlane, client kubernetes.Interface, ns string) {
	url, ca := cp.URL, string(cp.CAData)
	if err := cp.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{}); err == nil {
		t.Fatal("the API answered while stopped")
	}
	if err := cp.StartAPIServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	if cp.URL != url || string(cp.CAData) != ca {
		t.Errorf("URL %s (was %s), or the CA changed", cp.URL, url)
	}
	if _, err := client.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{}); err != nil {
		t.Errorf("namespace %s after the restart: %v", ns, err)
	}
}

func checkKubeconfig(t *testing.T, cp *ControlPlane) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := runtime.Decode(latest.Codec, data)
	if err != nil {
		t.Fatalf("decode kubeconfig: %v", err)
	}
	cfg := obj.(*clientcmdapi.Config)
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil || cfg.Clusters[ctx.Cluster].Server != cp.URL || cfg.AuthInfos[ctx.AuthInfo].Token != cp.AdminToken {
		t.Errorf("kubeconfig does not point at %s with the admin token:\n%s", cp.URL, data)
	}
}

func checkServiceAccount(t *testing.T, cp *ControlPlane, admin kubernetes.Interface, ns string) {
	cfg, err := cp.ServiceAccountConfig(t.Context(), ns, "reader")
	if err != nil {
		t.Fatal(err)
	}
	sa := kubernetes.NewForConfigOrDie(cfg)
	_, err = sa.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("list without a Role = %v, want Forbidden", err)
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "reader"}},
	}
	if _, err := admin.RbacV1().Roles(ns).Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The RBAC authorizer reads Roles through an informer: a new binding
	// takes effect a moment after it is created.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := sa.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{})
		if err == nil {
			return
		}
		if !apierrors.IsForbidden(err) || time.Now().After(deadline) {
			t.Fatalf("list with a Role: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
