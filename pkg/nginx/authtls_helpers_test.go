package nginx

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
)

// mtlsIssuer is a CA of the client certificate tests (crypto/x509).
type mtlsIssuer struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
	// serial numbers the issuer gives out.
	next int64
}

// mtlsCert is a client certificate with the chain it sends.
type mtlsCert struct {
	tls  tls.Certificate
	leaf *x509.Certificate
}

// sign makes a key and a certificate of tmpl signed by issuer (nil:
// self-signed), whose serial counter it advances.
func sign(t testing.TB, tmpl *x509.Certificate, issuer *mtlsIssuer) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, signerKey := tmpl, key
	if issuer != nil {
		issuer.next++
		tmpl.SerialNumber = big.NewInt(issuer.next)
		signer, signerKey = issuer.cert, issuer.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c, key
}

func newMTLSIssuer(t testing.TB, cn string, parent *mtlsIssuer) *mtlsIssuer {
	t.Helper()
	c, key := sign(t, &x509.Certificate{
		SerialNumber: big.NewInt(1000 + int64(len(cn))), Subject: pkix.Name{CommonName: cn, Organization: []string{"ingress-sync tests"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}, parent)
	return &mtlsIssuer{cert: c, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}), next: 100}
}

// client issues a client certificate for cn (extended key usage client
// auth); chain are the intermediates it sends after it. A nil issuer makes
// a self-signed one; expired makes one that expired an hour ago.
func (ca *mtlsIssuer) client(t testing.TB, cn string, expired bool, chain ...*mtlsIssuer) *mtlsCert {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if expired {
		tmpl.NotAfter = time.Now().Add(-time.Hour)
	}
	leaf, key := sign(t, tmpl, ca)
	out := &mtlsCert{tls: tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf}, leaf: leaf}
	for _, c := range chain {
		out.tls.Certificate = append(out.tls.Certificate, c.cert.Raw)
	}
	return out
}

// crl returns a PEM CRL of ca revoking certs.
func (ca *mtlsIssuer) crl(t testing.TB, certs ...*mtlsCert) []byte {
	t.Helper()
	tmpl := &x509.RevocationList{Number: big.NewInt(1), ThisUpdate: time.Now().Add(-time.Hour), NextUpdate: time.Now().Add(24 * time.Hour)}
	for _, c := range certs {
		tmpl.RevokedCertificateEntries = append(tmpl.RevokedCertificateEntries, x509.RevocationListEntry{SerialNumber: c.leaf.SerialNumber, RevocationTime: time.Now().Add(-time.Minute)})
	}
	der, err := x509.CreateRevocationList(rand.Reader, tmpl, ca.cert, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der})
}

func caSecret(name string, ca []byte, crl []byte) *corev1.Secret {
	data := map[string]string{"ca.crt": string(ca)}
	if crl != nil {
		data["ca.crl"] = string(crl)
	}
	return authSecret(name, data)
}

// anySessionCache hands every connection the last session stored, whatever
// its server name: a client that tries to resume a session made for
// another SNI name.
type anySessionCache struct {
	mu   sync.Mutex
	last *tls.ClientSessionState
}

func (c *anySessionCache) Get(string) (*tls.ClientSessionState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last, c.last != nil
}

func (c *anySessionCache) Put(_ string, s *tls.ClientSessionState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s != nil {
		c.last = s
	}
}

// mtlsClient sends HTTPS requests to nginx with SNI sni ("" sends none),
// cert as the client certificate (nil: none); maxVersion 0 is TLS 1.3.
type mtlsClient struct {
	h          *harness
	sni        string
	cert       *mtlsCert
	cache      tls.ClientSessionCache
	maxVersion uint16
	// keep reuses one connection for every request; h2 asks for HTTP/2.
	keep, h2 bool
	tr       *http.Transport
}

func (c *mtlsClient) transport() *http.Transport {
	if c.tr != nil {
		return c.tr
	}
	cfg := &tls.Config{ServerName: c.sni, InsecureSkipVerify: true, ClientSessionCache: c.cache, MaxVersion: c.maxVersion} //nolint:gosec // the server's certificate is not what these tests check
	if c.h2 {
		cfg.NextProtos = []string{"h2"}
	}
	if c.cert != nil {
		// Sent whatever CAs the server names (Go's client would otherwise
		// keep a certificate of another CA to itself).
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &c.cert.tls, nil }
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	port := strconv.Itoa(c.h.opts.HTTPSPort)
	tr := &http.Transport{
		DialTLSContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			raw, err := dialer.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
			if err != nil {
				return nil, err
			}
			conn := tls.Client(raw, cfg)
			if err := conn.HandshakeContext(ctx); err != nil {
				raw.Close()
				return nil, err
			}
			return conn, nil
		},
		DisableKeepAlives: !c.keep,
		ForceAttemptHTTP2: c.h2,
	}
	if c.keep {
		c.tr = tr
	}
	return tr
}

// get requests path of host (the Host header).
func (c *mtlsClient) get(t testing.TB, host, path string) echo.Response {
	t.Helper()
	tr := c.transport()
	if !c.keep {
		defer tr.CloseIdleConnections()
	}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := echo.Get(t.Context(), client, "https://"+host+path)
	if err != nil {
		t.Fatalf("GET https://%s%s (SNI %q): %v", host, path, c.sni, err)
	}
	return r
}
