package model

import (
	"crypto/x509"
	"encoding/pem"
	"regexp"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// FuzzClientCA: ParseClientCA and ParseClientCRL never panic; what
// ParseClientCA accepts is PEM certificates only, that parse again to the
// same certificates.
func FuzzClientCA(f *testing.F) {
	ca := newTestIssuer(f, "fuzz")
	f.Add([]byte(ca.pem))
	f.Add([]byte(ca.pem + ca.pem))
	f.Add([]byte("-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n"))
	f.Add([]byte("-----BEGIN X509 CRL-----\n-----END X509 CRL-----\n" + ca.pem))
	f.Add([]byte(ca.crl(f, 1, 2)))
	_, cas, _ := ParseClientCA([]byte(ca.pem))
	f.Fuzz(func(t *testing.T, data []byte) {
		if serials, err := ParseClientCRL(data, cas); err == nil {
			for _, s := range serials {
				if !regexp.MustCompile(`^(?:[0-9A-F]{2})+$`).MatchString(s) {
					t.Fatalf("serial %q", s)
				}
			}
		}
		out, certs, err := ParseClientCA(data)
		if err != nil {
			return
		}
		if len(certs) == 0 || len(certs) > intent.MaxClientCAs || strings.ContainsFunc(out, func(r rune) bool { return r != '\n' && (r < ' ' || r > '~') }) {
			t.Fatalf("%d certificates, output %q", len(certs), out)
		}
		rest := []byte(out)
		for i := 0; ; i++ {
			var blk *pem.Block
			blk, rest = pem.Decode(rest)
			if blk == nil {
				if i != len(certs) || len(rest) != 0 {
					t.Fatalf("%d blocks for %d certificates, rest %q", i, len(certs), rest)
				}
				break
			}
			c, err := x509.ParseCertificate(blk.Bytes)
			if blk.Type != "CERTIFICATE" || err != nil || !c.Equal(certs[i]) {
				t.Fatalf("block %d: %s, %v", i, blk.Type, err)
			}
		}
	})
}
