package kubeconfig

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/tools/clientcmd/api/latest"
)

func TestRESTConfig(t *testing.T) {
	kubeconfig := func(auth *clientcmdapi.AuthInfo, current string) *clientcmdapi.Config {
		c := clientcmdapi.NewConfig()
		c.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443", CertificateAuthority: "ca.crt"}
		c.AuthInfos["u"] = auth
		c.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
		c.CurrentContext = current
		return c
	}
	tests := []struct {
		name    string
		cfg     *clientcmdapi.Config
		wantErr bool
	}{
		{name: "token", cfg: kubeconfig(&clientcmdapi.AuthInfo{Token: "secret"}, "ctx")},
		{name: "no current context", cfg: kubeconfig(&clientcmdapi.AuthInfo{Token: "secret"}, "other"), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "kubeconfig")
			data, err := runtime.Encode(latest.Codec, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "ca.crt"), []byte("relative to the kubeconfig"), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := RESTConfig(path)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("RESTConfig() = %v, want ErrInvalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Host != "https://127.0.0.1:6443" || got.BearerToken != "secret" || got.CAFile != filepath.Join(dir, "ca.crt") {
				t.Errorf("RESTConfig() = host %q token %q CA file %q", got.Host, got.BearerToken, got.CAFile)
			}
		})
	}
	if _, err := RESTConfig(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, ErrInvalid) {
		t.Errorf("missing file: %v", err)
	}
}
