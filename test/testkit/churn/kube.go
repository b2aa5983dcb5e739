package churn

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/test/testkit/gatewayapi"
)

// kubeCallTimeout bounds one API call.
const kubeCallTimeout = 10 * time.Second

// KubeTarget writes changes through the Kubernetes API; the watcher turns
// them into events. Creates of objects that already exist (a second run
// on the same cluster) become updates; updates are unconditional.
type KubeTarget struct {
	cfg     *rest.Config
	cs      kubernetes.Interface
	gw      gatewayclient.Interface
	workers int
}

// NewKubeTarget returns a target on the cluster of cfg, with client-side
// rate limiting off and workers writes at once.
func NewKubeTarget(cfg *rest.Config, workers int) (*KubeTarget, error) {
	if workers < 1 {
		return nil, fmt.Errorf("%w: %d kube workers", ErrInvalidSpec, workers)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 1e6, 1e6
	cfg.Timeout = kubeCallTimeout
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("churn: kube client: %w", err)
	}
	gw, err := gatewayclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("churn: Gateway API client: %w", err)
	}
	return &KubeTarget{cfg: cfg, cs: cs, gw: gw, workers: workers}, nil
}

// LoadKubeconfig reads a kubeconfig file.
func LoadKubeconfig(path string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("churn: kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

// Workers is the number of concurrent writers.
func (t *KubeTarget) Workers() int { return t.workers }

// Flush has nothing to wait for: Write returns with the API's answer.
func (t *KubeTarget) Flush(context.Context) (int, error) { return 0, nil }

// Setup creates the namespaces, then the IngressClass (and the
// GatewayClass and Gateway), then the Secrets, Services and
// EndpointSlices, then the Ingresses or HTTPRoutes, each group with all
// workers.
func (t *KubeTarget) Setup(ctx context.Context, namespaces []string, changes []Change) error {
	for _, ns := range namespaces {
		obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		cctx, cancel := context.WithTimeout(ctx, kubeCallTimeout)
		_, err := t.cs.CoreV1().Namespaces().Create(cctx, obj, metav1.CreateOptions{})
		cancel()
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("churn: create namespace %s: %w", ns, err)
		}
	}
	var first, middle, last []Change
	crds := false
	for _, ch := range changes {
		switch ch.Key().Kind {
		case events.KindGatewayClass, events.KindGateway:
			crds = true
			first = append(first, ch)
		case events.KindIngressClass:
			first = append(first, ch)
		case events.KindIngress, events.KindHTTPRoute:
			last = append(last, ch)
		default:
			middle = append(middle, ch)
		}
	}
	if crds {
		if err := gatewayapi.Install(ctx, t.cfg); err != nil {
			return fmt.Errorf("churn: setup: %w", err)
		}
	}
	for _, group := range [][]Change{first, middle, last} {
		err := forEach(ctx, t.workers, group, func(ctx context.Context, ch Change) error {
			_, err := t.Write(ctx, ch)
			return err
		})
		if err != nil {
			return fmt.Errorf("churn: setup: %w", err)
		}
	}
	return nil
}

// Write makes the change through the API and returns the new
// resourceVersion ("" for a delete).
func (t *KubeTarget) Write(ctx context.Context, ch Change) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, kubeCallTimeout)
	defer cancel()
	k := ch.Key()
	var rv string
	var err error
	switch o := ch.Object.DeepCopyObject().(type) {
	case *discoveryv1.EndpointSlice:
		rv, err = kubeWrite(ctx, t.cs.DiscoveryV1().EndpointSlices(k.Namespace), ch.Op, o)
	case *networkingv1.Ingress:
		rv, err = kubeWrite(ctx, t.cs.NetworkingV1().Ingresses(k.Namespace), ch.Op, o)
	case *corev1.Service:
		rv, err = kubeWrite(ctx, t.cs.CoreV1().Services(k.Namespace), ch.Op, o)
	case *corev1.Secret:
		rv, err = kubeWrite(ctx, t.cs.CoreV1().Secrets(k.Namespace), ch.Op, o)
	case *networkingv1.IngressClass:
		rv, err = kubeWrite(ctx, t.cs.NetworkingV1().IngressClasses(), ch.Op, o)
	case *gatewayv1.HTTPRoute:
		rv, err = kubeWriteCR(ctx, t.gw.GatewayV1().HTTPRoutes(k.Namespace), ch.Op, o)
	case *gatewayv1.Gateway:
		rv, err = kubeWriteCR(ctx, t.gw.GatewayV1().Gateways(k.Namespace), ch.Op, o)
	case *gatewayv1.GatewayClass:
		rv, err = kubeWriteCR(ctx, t.gw.GatewayV1().GatewayClasses(), ch.Op, o)
	default:
		err = fmt.Errorf("unsupported object %T", o)
	}
	if err != nil {
		return "", fmt.Errorf("churn: %s %s: %w", ch.Op, k, err)
	}
	return rv, nil
}

// kubeAPI is the part of a typed client that Write uses.
type kubeAPI[T any] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// kubeCRAPI is kubeAPI with Get, for custom resources.
type kubeCRAPI[T any] interface {
	kubeAPI[T]
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
}

// crUpdateTries bounds the updates of a custom resource that conflict with
// a write of another (the watcher's status).
const crUpdateTries = 5

// kubeWriteCR is kubeWrite for a custom resource, whose update the API
// server takes only with the resourceVersion it has (an object of a
// built-in kind may be updated without one): an update reads it first,
// and reads it again after a conflict.
func kubeWriteCR[T interface {
	runtime.Object
	metav1.Object
}](ctx context.Context, api kubeCRAPI[T], op events.Op, obj T) (string, error) {
	if op == events.OpDelete || op == events.OpCreate {
		return kubeWrite(ctx, api, op, obj)
	}
	obj.SetCreationTimestamp(metav1.Time{})
	var err error
	for range crUpdateTries {
		var cur, out T
		if cur, err = api.Get(ctx, obj.GetName(), metav1.GetOptions{}); err != nil {
			return "", err
		}
		obj.SetResourceVersion(cur.GetResourceVersion())
		if out, err = api.Update(ctx, obj, metav1.UpdateOptions{}); err == nil {
			return out.GetResourceVersion(), nil
		}
		if !apierrors.IsConflict(err) {
			return "", err
		}
	}
	return "", err
}

func kubeWrite[T interface {
	runtime.Object
	metav1.Object
}](ctx context.Context, api kubeAPI[T], op events.Op, obj T) (string, error) {
	obj.SetCreationTimestamp(metav1.Time{})
	var out T
	var err error
	switch op {
	case events.OpDelete:
		return "", api.Delete(ctx, obj.GetName(), metav1.DeleteOptions{})
	case events.OpCreate:
		out, err = api.Create(ctx, obj, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			out, err = api.Update(ctx, obj, metav1.UpdateOptions{})
		}
	default:
		out, err = api.Update(ctx, obj, metav1.UpdateOptions{})
	}
	if err != nil {
		return "", err
	}
	return out.GetResourceVersion(), nil
}
