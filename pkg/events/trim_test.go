package events_test

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/events/eventstest"
)

// untrimmed adds what Trim drops to the metadata of obj.
func untrimmed[T runtime.Object](obj T) T {
	m := objectMetaOf(obj)
	m.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1"}}
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[events.LastAppliedAnnotation] = `{"apiVersion":"v1","kind":"Whatever"}`
	return obj
}

func objectMetaOf(obj runtime.Object) *metav1.ObjectMeta {
	return reflect.ValueOf(obj).Elem().FieldByName("ObjectMeta").Addr().Interface().(*metav1.ObjectMeta)
}

func TestTrimKeepsWhatTheBuilderReads(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  func() runtime.Object
	}{
		{"ingress", func() runtime.Object { return eventstest.Ingress() }},
		{"ingressclass", func() runtime.Object { return eventstest.IngressClass() }},
		{"service", func() runtime.Object { return eventstest.Service() }},
		{"endpointslice", func() runtime.Object { return eventstest.EndpointSlice(5) }},
		{"configmap", func() runtime.Object { return eventstest.ConfigMap() }},
		{"namespace", func() runtime.Object { return eventstest.Namespace() }},
		{"tls secret", func() runtime.Object { return eventstest.Secret() }},
		{"gatewayclass", func() runtime.Object { return eventstest.GatewayClass() }},
		{"gateway", func() runtime.Object { return eventstest.Gateway() }},
		{"httproute", func() runtime.Object { return eventstest.HTTPRoute() }},
		{"referencegrant", func() runtime.Object { return eventstest.ReferenceGrant() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := untrimmed(tc.obj())
			before := in.DeepCopyObject()
			got := events.Trim(in)
			if !reflect.DeepEqual(got, tc.obj()) {
				t.Errorf("Trim = %#v\nwant %#v", got, tc.obj())
			}
			if !reflect.DeepEqual(in, before) {
				t.Error("Trim modified its input")
			}
		})
	}
}

func TestTrimDropsEmptyAnnotations(t *testing.T) {
	svc := eventstest.Service()
	svc.Annotations = map[string]string{events.LastAppliedAnnotation: "{}"}
	got := events.Trim(svc).(*corev1.Service)
	if got.Annotations != nil {
		t.Errorf("annotations = %v, want nil", got.Annotations)
	}
}

func TestTrimSecretKeepsOnlyCertificateKeys(t *testing.T) {
	s := untrimmed(eventstest.Secret())
	s.Data["auth"] = []byte("user:$apr1$...")
	s.Data["password"] = []byte("hunter2")
	s.StringData = map[string]string{"token": "x"}
	got := events.Trim(s).(*corev1.Secret)
	want := eventstest.Secret()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Trim = %#v\nwant %#v", got, want)
	}
	got.Data[corev1.TLSCertKey][0] = 'X'
	if s.Data[corev1.TLSCertKey][0] == 'X' {
		t.Error("trimmed secret shares data with its input")
	}
}

func TestTrimEdgeCases(t *testing.T) {
	if got := events.Trim(nil); got != nil {
		t.Errorf("Trim(nil) = %v", got)
	}
	if got := events.Trim((*networkingv1.Ingress)(nil)); got != nil {
		t.Errorf("Trim(typed nil) = %v", got)
	}
	pod := untrimmed(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"}}})
	got := events.Trim(pod).(*corev1.Pod)
	want := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Trim(pod) = %#v", got)
	}
	empty := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Data: map[string][]byte{"other": nil}}
	if got := events.Trim(empty).(*corev1.Secret); got.Data != nil {
		t.Errorf("secret without kept keys has data %v", got.Data)
	}
}

// TestTrimSecretKeepsTheCRL: a kubernetes.io/tls Secret that auth-tls-secret
// names keeps its ca.crl, the CA's revoked serials.
func TestTrimSecretKeepsTheCRL(t *testing.T) {
	s := eventstest.Secret()
	s.Data[events.SecretKeyCACRL] = []byte("-----BEGIN X509 CRL-----\nMIIB...\n-----END X509 CRL-----\n")
	got := events.Trim(s).(*corev1.Secret)
	if string(got.Data[events.SecretKeyCACRL]) != string(s.Data[events.SecretKeyCACRL]) {
		t.Errorf("ca.crl = %q, want it kept", got.Data[events.SecretKeyCACRL])
	}
}

// TestTrimNamespaceKeepsNameAndLabels: a Namespace is published with its
// name and labels only, whatever else it carries.
func TestTrimNamespaceKeepsNameAndLabels(t *testing.T) {
	full := eventstest.Namespace()
	full.UID, full.ResourceVersion, full.Generation = "0d1e2f3a-4b5c-4d6e-f7a8-b9c0d1e2f3a4", "48140", 1
	full.CreationTimestamp = eventstest.Created()
	full.Annotations = map[string]string{"owner": "web-team", events.LastAppliedAnnotation: "{}"}
	full.Finalizers = []string{"example.com/keep"}
	full.Spec.Finalizers = []corev1.FinalizerName{corev1.FinalizerKubernetes}
	full.Status.Phase = corev1.NamespaceActive
	before := full.DeepCopy()
	got := events.Trim(full)
	if want := eventstest.Namespace(); !reflect.DeepEqual(got, want) {
		t.Errorf("Trim = %#v\nwant %#v", got, want)
	}
	if !reflect.DeepEqual(full, before) {
		t.Error("Trim modified its input")
	}
	got.(*corev1.Namespace).Labels["team"] = "changed"
	if full.Labels["team"] != "web" {
		t.Error("Trim shares the labels map with its input")
	}
}
