package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
)

const (
	waitTimeout = 30 * time.Second
	echoImage   = "registry.k8s.io/gateway-api/echo-basic:v1.5.1"
)

// deployment is an echo-basic Deployment as conformance/base has them.
func deployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: echoImage, Env: []corev1.EnvVar{
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
					{Name: "NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
				}}}},
			},
		},
	}
}

// service selects the Deployment's Pods, port 8080 to echo's 3000.
func service(ns, name string, typ corev1.ServiceType) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{Type: typ, Selector: map[string]string{"app": name}, Ports: []corev1.ServicePort{
			{Name: "http", Protocol: corev1.ProtocolTCP, Port: 8080, TargetPort: intstr.FromInt32(3000)}}},
	}
}

// readyPods waits for n ready Pods of app with IPs of PodRange.
func readyPods(t *testing.T, ns, app string, n int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	eventually(t, waitTimeout, func() (bool, string) {
		list, err := kube.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=" + app})
		if err != nil {
			return false, err.Error()
		}
		pods = pods[:0]
		for _, p := range list.Items {
			ip, err := netip.ParseAddr(p.Status.PodIP)
			if podReady(&p) && err == nil && PodRange.Contains(ip) && p.Spec.NodeName == nodeName {
				pods = append(pods, p)
			}
		}
		return len(pods) == n && len(list.Items) == n, fmt.Sprintf("%d of %d pods bound and ready with IPs, want %d", len(pods), len(list.Items), n)
	})
	return pods
}

func TestDeploymentPodsBecomeReady(t *testing.T) {
	needCluster(t)
	ns := testenv.NewNamespace(t, kube)
	d, err := kube.AppsV1().Deployments(ns).Create(t.Context(), deployment(ns, "web", 2), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods := readyPods(t, ns, "web", 2)
	if pods[0].Status.PodIP == pods[1].Status.PodIP {
		t.Fatalf("two pods share the IP %s", pods[0].Status.PodIP)
	}
	eventually(t, waitTimeout, func() (bool, string) {
		d, err = kube.AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		ok := d.Status.ObservedGeneration == d.Generation && d.Status.AvailableReplicas == 2 &&
			len(d.Status.Conditions) == 1 && d.Status.Conditions[0].Status == corev1.ConditionTrue
		return ok, fmt.Sprintf("deployment status %+v", d.Status)
	})
	d.Spec.Replicas = new(int32(1))
	if _, err := kube.AppsV1().Deployments(ns).Update(t.Context(), d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	readyPods(t, ns, "web", 1)
}

func TestEndpointSliceFromPods(t *testing.T) {
	needCluster(t)
	ns := testenv.NewNamespace(t, kube)
	if _, err := kube.AppsV1().Deployments(ns).Create(t.Context(), deployment(ns, "api", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Services(ns).Create(t.Context(), service(ns, "api", corev1.ServiceTypeClusterIP), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := readyPods(t, ns, "api", 2)
	var want []string
	for _, p := range pods {
		want = append(want, p.Status.PodIP)
	}
	slices.Sort(want)
	eventually(t, waitTimeout, func() (bool, string) {
		list, err := kube.DiscoveryV1().EndpointSlices(ns).List(t.Context(), metav1.ListOptions{
			LabelSelector: discoveryv1.LabelServiceName + "=api"})
		if err != nil || len(list.Items) != 1 {
			return false, fmt.Sprintf("slices %v, %v", list, err)
		}
		s := list.Items[0]
		var got []string
		for _, ep := range s.Endpoints {
			got = append(got, ep.Addresses...)
		}
		slices.Sort(got)
		for _, ep := range s.Endpoints {
			if ep.NodeName == nil || *ep.NodeName != nodeName {
				return false, fmt.Sprintf("endpoint %v without the node", ep.Addresses)
			}
		}
		portOK := len(s.Ports) == 1 && *s.Ports[0].Port == 3000 && *s.Ports[0].Name == "http"
		return slices.Equal(got, want) && portOK, fmt.Sprintf("endpoints %v ports %v, want %v on 3000", got, s.Ports, want)
	})
}

// echoJSON is the part of echo-basic's answer the tests read.
type echoJSON struct {
	Path      string              `json:"path"`
	Host      string              `json:"host"`
	Method    string              `json:"method"`
	Namespace string              `json:"namespace"`
	Pod       string              `json:"pod"`
	Headers   map[string][]string `json:"headers"`
}

func TestLoadBalancerReachesEcho(t *testing.T) {
	needCluster(t)
	ns := testenv.NewNamespace(t, kube)
	if _, err := kube.AppsV1().Deployments(ns).Create(t.Context(), deployment(ns, "lb", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Services(ns).Create(t.Context(), service(ns, "lb", corev1.ServiceTypeLoadBalancer), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := readyPods(t, ns, "lb", 2)
	var vip string
	eventually(t, waitTimeout, func() (bool, string) {
		svc, err := kube.CoreV1().Services(ns).Get(t.Context(), "lb", metav1.GetOptions{})
		if err != nil || len(svc.Status.LoadBalancer.Ingress) != 1 {
			return false, fmt.Sprintf("service %v: %v", err, svc.Status)
		}
		vip = svc.Status.LoadBalancer.Ingress[0].IP
		ip, err := netip.ParseAddr(vip)
		return err == nil && LoadBalancerRange.Contains(ip), "load balancer address " + vip
	})
	client := &http.Client{Timeout: 5 * time.Second}
	url := "http://" + vip + ":8080/some/path?x=1"
	var got echoJSON
	eventually(t, waitTimeout, func() (bool, string) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		req.Host = "echo.example"
		req.Header.Set("X-Echo-Set-Header", "X-Foo:bar")
		resp, err := client.Do(req)
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(body, &got); err != nil {
			return false, fmt.Sprintf("%s: %q", resp.Status, body)
		}
		return resp.Header.Get("X-Foo") == "bar", "X-Foo " + resp.Header.Get("X-Foo")
	})
	names := []string{pods[0].Name, pods[1].Name}
	if got.Path != "/some/path?x=1" || got.Host != "echo.example" || got.Method != "GET" || got.Namespace != ns || !slices.Contains(names, got.Pod) {
		t.Fatalf("echo answered %+v, want /some/path?x=1 from %s, one of %v", got, ns, names)
	}
}

func TestNamespaceDeletionCompletes(t *testing.T) {
	needCluster(t)
	ns := testenv.NewNamespace(t, kube)
	if _, err := kube.AppsV1().Deployments(ns).Create(t.Context(), deployment(ns, "gone", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Services(ns).Create(t.Context(), service(ns, "gone", corev1.ServiceTypeClusterIP), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	readyPods(t, ns, "gone", 1)
	if err := kube.CoreV1().Namespaces().Delete(t.Context(), ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitTimeout, func() (bool, string) {
		n, err := kube.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		return false, fmt.Sprintf("namespace %s: %v %v", ns, err, n.Status)
	})
}
