package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
	"github.com/ingress-sync/ingress-sync/test/testkit/gatewayapi"
	"github.com/ingress-sync/ingress-sync/test/testkit/netns"
	"github.com/ingress-sync/ingress-sync/test/testkit/world"
)

// backendSet is the demo's echo backends, one per example Service.
type backendSet []*echo.Server

func (b backendSet) close() {
	for _, s := range b {
		_ = s.Close()
	}
}

// demoServices are the example Services and the address of each backend.
var demoServices = []string{"echo-a", "echo-b"}

// startBackends starts the echo backends, applies the examples, and gives
// them what no controller makes here: EndpointSlices and the TLS Secret.
func startBackends(ctx context.Context, w *world.World, examples string) (backendSet, error) {
	var set backendSet
	kube, err := newClients(w)
	if err != nil {
		return nil, err
	}
	if err := gatewayapi.Install(ctx, w.CP.Config()); err != nil {
		return nil, err
	}
	if err := kube.ensure(ctx, fixtures.IngressClass(world.IngressClass, world.ControllerClass, false)); err != nil {
		return nil, err
	}
	if err := applyDir(ctx, kube, examples); err != nil {
		return nil, err
	}
	for i, svc := range demoServices {
		s, err := echo.Start(svc, fmt.Sprintf("%s:8080", netns.Addr(i+1)))
		if err != nil {
			set.close()
			return nil, err
		}
		set = append(set, s)
		es := fixtures.EndpointSlice("demo", svc+"-1", svc, 8080, netns.Addr(i+1))
		if err := kube.ensure(ctx, es); err != nil {
			set.close()
			return nil, err
		}
	}
	pair, err := certs.Generate(certs.Options{Hosts: []string{"secure.example.com"}})
	if err != nil {
		set.close()
		return nil, err
	}
	if err := kube.ensure(ctx, fixtures.TLSSecret("demo", "demo-tls", pair)); err != nil {
		set.close()
		return nil, err
	}
	return set, nil
}

// applyDir creates every object of the YAML files in dir, in name order.
func applyDir(ctx context.Context, kube clients, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		for _, doc := range bytes.Split(data, []byte("\n---")) {
			if len(bytes.TrimSpace(stripComments(doc))) == 0 {
				continue
			}
			obj, _, err := decoder.Decode(doc, nil, nil)
			if err != nil {
				return fmt.Errorf("demo: %s: %w", f, err)
			}
			if err := kube.ensure(ctx, obj); err != nil {
				return fmt.Errorf("demo: %s: %w", f, err)
			}
		}
	}
	return nil
}

func stripComments(doc []byte) []byte {
	var out []string
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			out = append(out, line)
		}
	}
	return []byte(strings.Join(out, "\n"))
}

// decoder reads the examples: the built-in kinds and Gateway API's.
var decoder = func() runtime.Decoder {
	s := runtime.NewScheme()
	if err := errors.Join(scheme.AddToScheme(s), gatewayv1.Install(s)); err != nil {
		panic(err)
	}
	return serializer.NewCodecFactory(s).UniversalDeserializer()
}()

// clients are the demo's API clients.
type clients struct {
	kube kubernetes.Interface
	gw   gatewayclient.Interface
}

func newClients(w *world.World) (clients, error) {
	gw, err := gatewayclient.NewForConfig(w.CP.Config())
	return clients{kube: w.Kube, gw: gw}, err
}

// ensure creates obj, leaving an existing one as it is.
func (c clients) ensure(ctx context.Context, obj runtime.Object) error {
	if m, ok := obj.(metav1.Object); ok {
		m.SetUID("")
		m.SetResourceVersion("")
		m.SetCreationTimestamp(metav1.Time{})
	}
	err := c.create(ctx, obj)
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func (c clients) create(ctx context.Context, obj runtime.Object) error {
	var err error
	opts := metav1.CreateOptions{}
	kube, gw := c.kube, c.gw.GatewayV1()
	switch o := obj.(type) {
	case *gatewayv1.GatewayClass:
		_, err = gw.GatewayClasses().Create(ctx, o, opts)
	case *gatewayv1.Gateway:
		_, err = gw.Gateways(o.Namespace).Create(ctx, o, opts)
	case *gatewayv1.HTTPRoute:
		_, err = gw.HTTPRoutes(o.Namespace).Create(ctx, o, opts)
	case *corev1.Namespace:
		_, err = kube.CoreV1().Namespaces().Create(ctx, o, opts)
	case *corev1.Service:
		_, err = kube.CoreV1().Services(o.Namespace).Create(ctx, o, opts)
	case *corev1.Secret:
		_, err = kube.CoreV1().Secrets(o.Namespace).Create(ctx, o, opts)
	case *networkingv1.Ingress:
		_, err = kube.NetworkingV1().Ingresses(o.Namespace).Create(ctx, o, opts)
	case *networkingv1.IngressClass:
		_, err = kube.NetworkingV1().IngressClasses().Create(ctx, o, opts)
	case *discoveryv1.EndpointSlice:
		_, err = kube.DiscoveryV1().EndpointSlices(o.Namespace).Create(ctx, o, opts)
	default:
		return fmt.Errorf("demo: cannot apply a %T", obj)
	}
	return err
}

// exampleGateway is the Gateway of deploy/examples whose listener the
// demo forwards.
const exampleGatewayNamespace, exampleGatewayName = "demo", "demo-gateway"

// waitGateway waits until the example Gateway is Programmed (the watcher
// discovered the CRDs, gave it a Service, and the syncer serves it), so
// that what printHowTo offers answers at once; bounded by ctx.
func waitGateway(ctx context.Context, w *world.World) error {
	c, err := newClients(w)
	if err != nil {
		return err
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		gw, err := c.gw.GatewayV1().Gateways(exampleGatewayNamespace).Get(ctx, exampleGatewayName, metav1.GetOptions{})
		if err == nil && meta.IsStatusConditionTrue(gw.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed)) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("demo: Gateway %s/%s not Programmed: %w (last error %v)", exampleGatewayNamespace, exampleGatewayName, ctx.Err(), err)
		case <-tick.C:
		}
	}
}
