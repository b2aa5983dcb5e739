package migrate

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/ingress-sync/ingress-sync/internal/kubeconfig"
)

// ClusterOptions say what ReadCluster lists.
type ClusterOptions struct {
	// Namespace limits the Ingresses, Services and EndpointSlices read;
	// "" reads every namespace.
	Namespace string
	// ConfigMap is the "namespace/name" of the controller ConfigMap, or
	// "" for none.
	ConfigMap string
	// Timeout bounds each API call.
	Timeout time.Duration
}

// ReadKubeconfig connects as kubectl would with the kubeconfig at path
// ("" for $KUBECONFIG, then the in-cluster service account) and reads the
// cluster with ReadCluster.
func ReadKubeconfig(ctx context.Context, path string, o ClusterOptions) (*Input, error) {
	cfg, err := kubeconfig.RESTConfig(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	cfg.UserAgent = "ingress-sync-migrate-check"
	cfg.Timeout = o.Timeout
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	return ReadCluster(ctx, client, o)
}

// ReadCluster lists the Ingresses, Services and EndpointSlices of a
// namespace (or all), the TLS Secrets the Ingresses name and the
// controller ConfigMap. A missing ConfigMap or Secret is no error: Check
// reports the first and Build the second.
func ReadCluster(ctx context.Context, client kubernetes.Interface, o ClusterOptions) (*Input, error) {
	if o.Timeout <= 0 {
		return nil, fmt.Errorf("%w: timeout must be positive", ErrInput)
	}
	in := &Input{Source: "cluster"}
	if o.Namespace != "" {
		in.Source = "cluster, namespace " + o.Namespace
	}
	call := func(what string, f func(ctx context.Context) error) error {
		ctx, cancel := context.WithTimeout(ctx, o.Timeout)
		defer cancel()
		if err := f(ctx); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrInput, what, err)
		}
		return nil
	}
	ns, list := o.Namespace, metav1.ListOptions{}
	steps := []struct {
		what string
		f    func(ctx context.Context) error
	}{
		{"list Ingresses", func(ctx context.Context) error {
			l, err := client.NetworkingV1().Ingresses(ns).List(ctx, list)
			if err == nil {
				appendItems(in, l.Items)
			}
			return err
		}},
		{"list Services", func(ctx context.Context) error {
			l, err := client.CoreV1().Services(ns).List(ctx, list)
			if err == nil {
				appendItems(in, l.Items)
			}
			return err
		}},
		{"list EndpointSlices", func(ctx context.Context) error {
			l, err := client.DiscoveryV1().EndpointSlices(ns).List(ctx, list)
			if err == nil {
				appendItems(in, l.Items)
			}
			return err
		}},
	}
	var err error
	for _, st := range steps {
		if err = call(st.what, st.f); err != nil {
			break
		}
	}
	if err == nil {
		err = in.readReferenced(ctx, client, o, call)
	}
	if err != nil {
		return nil, err
	}
	sortObjects(in.Objects)
	return in, nil
}

// readReferenced gets the controller ConfigMap and the TLS Secrets the
// Ingresses name; a missing one is skipped.
func (in *Input) readReferenced(ctx context.Context, client kubernetes.Interface, o ClusterOptions,
	call func(string, func(context.Context) error) error) error {
	get := func(what string, f func(ctx context.Context) (runtime.Object, error)) error {
		return call("get "+what, func(ctx context.Context) error {
			obj, err := f(ctx)
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err == nil {
				in.Objects = append(in.Objects, obj)
			}
			return err
		})
	}
	if o.ConfigMap != "" {
		ns, name, err := splitKey(o.ConfigMap)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInput, err)
		}
		if err := get("ConfigMap "+o.ConfigMap, func(ctx context.Context) (runtime.Object, error) {
			return client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		}); err != nil {
			return err
		}
	}
	for _, key := range tlsSecrets(in.Objects) {
		if err := get("Secret "+key[0]+"/"+key[1], func(ctx context.Context) (runtime.Object, error) {
			return client.CoreV1().Secrets(key[0]).Get(ctx, key[1], metav1.GetOptions{})
		}); err != nil {
			return err
		}
	}
	return nil
}

// appendItems adds the items of a list to in.Objects.
func appendItems[T any, P interface {
	*T
	runtime.Object
}](in *Input, items []T) {
	for i := range items {
		in.Objects = append(in.Objects, P(&items[i]))
	}
}
