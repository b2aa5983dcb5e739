// Package certs generates self-signed certificates: the syncer's fallback
// default certificate, nginx's placeholder certificate, and the certificates
// of tests and demos.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// Options describe a certificate to generate.
type Options struct {
	// CommonName of the subject; defaults to the first host.
	CommonName string
	// Hosts become DNS or IP subject alternative names.
	Hosts []string
	// NotBefore defaults to an hour ago; Validity defaults to a year.
	NotBefore time.Time
	Validity  time.Duration
	// IsCA makes a certificate that can sign others.
	IsCA bool
	// Client makes a client certificate (extended key usage clientAuth)
	// instead of a server one.
	Client bool
	// Parent and ParentKey sign the certificate; nil means self-signed.
	Parent    *x509.Certificate
	ParentKey *ecdsa.PrivateKey
}

// Pair is a generated certificate with its key, parsed and PEM-encoded.
type Pair struct {
	Cert    *x509.Certificate
	Key     *ecdsa.PrivateKey
	CertPEM []byte
	KeyPEM  []byte
}

// Generate creates an ECDSA P-256 certificate as the options say.
func Generate(o Options) (*Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("certs: generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("certs: serial: %w", err)
	}
	tmpl := template(o, serial)
	parent, signer := tmpl, key
	if o.Parent != nil {
		parent, signer = o.Parent, o.ParentKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return nil, fmt.Errorf("certs: create certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("certs: parse certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("certs: marshal key: %w", err)
	}
	return &Pair{
		Cert: cert, Key: key,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

func template(o Options, serial *big.Int) *x509.Certificate {
	notBefore := o.NotBefore
	if notBefore.IsZero() {
		notBefore = time.Now().Add(-time.Hour)
	}
	validity := o.Validity
	if validity <= 0 {
		validity = 365 * 24 * time.Hour
	}
	cn := o.CommonName
	if cn == "" && len(o.Hosts) > 0 {
		cn = o.Hosts[0]
	}
	t := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"ingress-sync"}},
		NotBefore:    notBefore,
		NotAfter:     notBefore.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if o.Client {
		t.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	if o.IsCA {
		// No extended key usage: a CA signs server and client certificates
		// (OpenSSL checks a CA's usages against a client's purpose too).
		t.ExtKeyUsage = nil
		t.IsCA, t.BasicConstraintsValid = true, true
		t.KeyUsage |= x509.KeyUsageCertSign
	}
	for _, h := range o.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			t.IPAddresses = append(t.IPAddresses, ip)
		} else {
			t.DNSNames = append(t.DNSNames, h)
		}
	}
	return t
}
