package testenv

import (
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/tools/clientcmd/api/latest"
)

// KubeconfigContext is the context name written by WriteKubeconfig.
const KubeconfigContext = "ingress-sync-testenv"

// WriteKubeconfig writes a kubeconfig file (mode 0600) for the admin user,
// with the apiserver's certificate embedded, usable by kubectl and by
// `watcher --kubeconfig`.
func (cp *ControlPlane) WriteKubeconfig(path string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[KubeconfigContext] = &clientcmdapi.Cluster{
		Server:                   cp.URL,
		CertificateAuthorityData: cp.CAData,
	}
	cfg.AuthInfos[KubeconfigContext] = &clientcmdapi.AuthInfo{Token: cp.AdminToken}
	cfg.Contexts[KubeconfigContext] = &clientcmdapi.Context{
		Cluster:  KubeconfigContext,
		AuthInfo: KubeconfigContext,
	}
	cfg.CurrentContext = KubeconfigContext
	// The clientcmd package itself would pull in a module that go.mod does
	// not require; its codec is enough to write the file.
	data, err := runtime.Encode(latest.Codec, cfg)
	if err != nil {
		return fmt.Errorf("encode kubeconfig: %w", err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}
