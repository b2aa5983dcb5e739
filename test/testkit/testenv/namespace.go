package testenv

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// maxPrefix keeps generated namespace names well under the 63-character limit.
const maxPrefix = 40

// NewNamespace creates a fresh namespace named after the test and deletes it
// in t.Cleanup (without controllers it then stays Terminating, which is
// harmless: every test gets a new one).
func NewNamespace(t testing.TB, client kubernetes.Interface) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: namespacePrefix(t.Name())}}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	created, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := client.CoreV1().Namespaces().Delete(ctx, created.Name, metav1.DeleteOptions{}); err != nil {
			t.Logf("delete namespace %s: %v", created.Name, err)
		}
	})
	return created.Name
}

// namespacePrefix turns a test name into a DNS-label prefix ending in "-".
func namespacePrefix(testName string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(testName) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteRune('-')
		}
	}
	p := strings.Trim(b.String(), "-")
	for strings.Contains(p, "--") {
		p = strings.ReplaceAll(p, "--", "-")
	}
	if len(p) > maxPrefix {
		p = strings.TrimRight(p[:maxPrefix], "-")
	}
	if p == "" || p[0] < 'a' {
		p = "t" + p
	}
	return p + "-"
}
