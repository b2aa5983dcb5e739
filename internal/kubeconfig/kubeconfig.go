// Package kubeconfig loads the Kubernetes client configuration as kubectl
// finds it. The watcher and `syncer migrate-check` share it; it is apart
// from pkg/watch so that the syncer binary does not link the watcher (and
// its embedded NATS server).
package kubeconfig

import (
	"errors"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ErrInvalid wraps errors about the Kubernetes client configuration.
var ErrInvalid = errors.New("kubeconfig: no usable client configuration")

// RESTConfig returns the client configuration as kubectl finds it: the
// kubeconfig file path, else $KUBECONFIG, else the in-cluster service
// account (the usual case of a pod).
func RESTConfig(path string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return cfg, nil
}
