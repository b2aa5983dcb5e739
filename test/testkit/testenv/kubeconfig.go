package testenv

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
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
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}
