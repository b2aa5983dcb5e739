package intent

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// ParseCAPEM returns the certificates of a ca.crt, re-encoded as PEM
// (other blocks and text dropped); at least one must parse, none may fail.
// The build reads the CA of a backend TLS profile with it (proxy-ssl-secret,
// a BackendTLSPolicy's ConfigMaps), and the Gateway API status says with it
// whether a ConfigMap's ca.crt is malformed.
func ParseCAPEM(data []byte) ([]byte, error) {
	var out []byte
	for len(data) > 0 {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return nil, fmt.Errorf("a certificate does not parse: %w", err)
		}
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b.Bytes})...)
	}
	if out == nil {
		return nil, errors.New("holds no PEM certificate")
	}
	return out, nil
}
