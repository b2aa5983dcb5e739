package certs

import (
	"crypto/tls"
	"crypto/x509"
	"testing"
)

func TestGenerate(t *testing.T) {
	ca, err := Generate(Options{CommonName: "test CA", IsCA: true})
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := Generate(Options{Hosts: []string{"a.example.com", "*.b.example.com", "198.18.0.1"}, Parent: ca.Cert, ParentKey: ca.Key})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(leaf.CertPEM, leaf.KeyPEM); err != nil {
		t.Fatalf("PEM pair does not load: %v", err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	cases := []struct {
		name, host string
		ok         bool
	}{
		{"exact DNS name", "a.example.com", true},
		{"wildcard one label", "x.b.example.com", true},
		{"wildcard two labels", "x.y.b.example.com", false},
		{"IP address", "198.18.0.1", true},
		{"other name", "c.example.com", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := leaf.Cert.Verify(x509.VerifyOptions{DNSName: tc.host, Roots: roots})
			if (err == nil) != tc.ok {
				t.Fatalf("verify %s: err=%v, want ok=%v", tc.host, err, tc.ok)
			}
		})
	}
	self, err := Generate(Options{Hosts: []string{"self.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(self.Cert)
	if _, err := self.Cert.Verify(x509.VerifyOptions{DNSName: "self.example.com", Roots: pool}); err != nil {
		t.Fatalf("self-signed certificate does not verify as its own root: %v", err)
	}
}
