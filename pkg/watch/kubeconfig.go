package watch

import (
	"errors"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ErrKubeconfig wraps errors about the Kubernetes client configuration.
var ErrKubeconfig = errors.New("watch: kubeconfig")

// RESTConfig returns the client configuration as kubectl finds it: the
// kubeconfig file path, else $KUBECONFIG, else the in-cluster service
// account (the usual case of a pod).
func RESTConfig(path string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKubeconfig, err)
	}
	return cfg, nil
}
