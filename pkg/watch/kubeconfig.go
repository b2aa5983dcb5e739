package watch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/tools/clientcmd/api/latest"
)

// ErrKubeconfig wraps errors about a kubeconfig file.
var ErrKubeconfig = errors.New("watch: kubeconfig")

// RESTConfig returns the client configuration of a kubeconfig file: path,
// else $KUBECONFIG, else the in-cluster service account.
//
// It reads the current context's server, CA, client certificate, token and
// basic auth; exec and auth-provider plugins are refused. (client-go's
// clientcmd loader would do all of it, but it needs a module go.mod does not
// require yet.)
func RESTConfig(path string) (*rest.Config, error) {
	if path == "" {
		path = os.Getenv("KUBECONFIG")
	}
	if path == "" {
		return rest.InClusterConfig()
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKubeconfig, err)
	}
	obj, err := runtime.Decode(latest.Codec, data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrKubeconfig, path, err)
	}
	cfg, ok := obj.(*clientcmdapi.Config)
	if !ok {
		return nil, fmt.Errorf("%w: %s is not a kubeconfig", ErrKubeconfig, path)
	}
	return restConfigOf(cfg, filepath.Dir(path))
}

// restConfigOf builds the rest.Config of cfg's current context; relative
// file paths are relative to dir, as kubectl reads them.
func restConfigOf(cfg *clientcmdapi.Config, dir string) (*rest.Config, error) {
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil {
		return nil, fmt.Errorf("%w: no current context %q", ErrKubeconfig, cfg.CurrentContext)
	}
	cluster, auth := cfg.Clusters[ctx.Cluster], cfg.AuthInfos[ctx.AuthInfo]
	if cluster == nil || cluster.Server == "" {
		return nil, fmt.Errorf("%w: context %q has no cluster server", ErrKubeconfig, cfg.CurrentContext)
	}
	if auth == nil {
		auth = clientcmdapi.NewAuthInfo()
	}
	if auth.Exec != nil || auth.AuthProvider != nil {
		return nil, fmt.Errorf("%w: exec and auth-provider credentials are not supported", ErrKubeconfig)
	}
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	return &rest.Config{
		Host:            cluster.Server,
		BearerToken:     auth.Token,
		BearerTokenFile: abs(auth.TokenFile),
		Username:        auth.Username,
		Password:        auth.Password,
		TLSClientConfig: rest.TLSClientConfig{
			Insecure:   cluster.InsecureSkipTLSVerify,
			ServerName: cluster.TLSServerName,
			CAFile:     abs(cluster.CertificateAuthority),
			CAData:     cluster.CertificateAuthorityData,
			CertFile:   abs(auth.ClientCertificate),
			CertData:   auth.ClientCertificateData,
			KeyFile:    abs(auth.ClientKey),
			KeyData:    auth.ClientKeyData,
		},
	}, nil
}
