package admission

import (
	"context"
	"slices"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

func TestCacheNeighbours(t *testing.T) {
	objs := []runtime.Object{
		named(newIngress("a.example.com", "/api/", nil), "ns", "api", 1),
		named(newIngress("a.example.com", "/web", nil), "ns", "web", 2),
		named(newIngress("a.example.com", "/rx/.*", map[string]string{prefix + "use-regex": "true"}), "ns", "regex", 3),
		named(newIngress("b.example.com", "/api", nil), "ns", "other-host", 4),
		named(newIngress("", "/api", nil), "ns", "no-host", 5),
		&networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}},
	}
	c, err := NewCache(fake.NewClientset(objs...), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); c.Shutdown() }()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		host  string
		paths []string
		want  []string
	}{
		{name: "same path but for the trailing slash, and the regex Ingress of the host", host: "a.example.com", paths: []string{"/api"}, want: []string{"api", "regex"}},
		{name: "two paths", host: "a.example.com", paths: []string{"/api", "/web/"}, want: []string{"api", "regex", "web"}},
		{name: "no path in common", host: "b.example.com", paths: []string{"/x"}},
		{name: "default server", host: "_", paths: []string{"/api"}, want: []string{"no-host"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, ing := range c.Neighbours(tc.host, tc.paths) {
				got = append(got, ing.Name)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Neighbours(%s, %q) = %q, want %q", tc.host, tc.paths, got, tc.want)
			}
		})
	}
	if _, ok := c.IngressClasses()["nginx"]; !ok || len(c.IngressClasses()) != 1 {
		t.Errorf("IngressClasses() = %v, want nginx", c.IngressClasses())
	}
}
