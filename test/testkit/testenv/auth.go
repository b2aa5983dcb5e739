package testenv

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// AdminUser is the user name of the static admin token; it is in the group
// system:masters.
const AdminUser = "ingress-sync-admin"

// writeServiceAccountKey writes a fresh RSA private key, PEM encoded, used by
// the apiserver both to sign and to verify service account tokens.
func writeServiceAccountKey(path string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("service account key: %w", err)
	}
	block := &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}
	return os.WriteFile(path, pem.EncodeToMemory(block), 0o600)
}

// writeTokenFile writes a --token-auth-file with one admin token and returns
// the token.
func writeTokenFile(path string) (string, error) {
	buf := make([]byte, 24)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	token := hex.EncodeToString(buf)
	line := fmt.Sprintf("%s,%s,%s,\"system:masters\"\n", token, AdminUser, AdminUser)
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	return token, nil
}

// readCA returns the certificates the apiserver generated in certDir: the
// serving certificate followed by the CA that signed it.
func readCA(certDir string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(certDir, "apiserver.crt"))
	if err != nil {
		return nil, fmt.Errorf("apiserver certificate: %w", err)
	}
	return b, nil
}

// ServiceAccountConfig returns a copy of the admin config that authenticates
// as the service account ns/name instead, with a token from the TokenRequest
// API valid for an hour. The service account is created when missing. It has
// no permissions until the caller binds a Role to it: use it to test RBAC.
func (cp *ControlPlane) ServiceAccountConfig(ctx context.Context, ns, name string) (*rest.Config, error) {
	client, err := kubernetes.NewForConfig(cp.Config())
	if err != nil {
		return nil, err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	callCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err = client.CoreV1().ServiceAccounts(ns).Create(callCtx, sa, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create service account %s/%s: %w", ns, name, err)
	}
	expiry := int64(3600)
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}
	tr, err := client.CoreV1().ServiceAccounts(ns).CreateToken(callCtx, name, req, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("token for service account %s/%s: %w", ns, name, err)
	}
	cfg := cp.Config()
	cfg.BearerToken = tr.Status.Token
	return cfg, nil
}
