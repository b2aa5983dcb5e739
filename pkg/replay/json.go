package replay

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"encoding/json"
	"io"
)

// snapshotJSON is the JSON form of a Snapshot: the point asked for, the
// Configuration without key material, and the rendered nginx.conf if any.
type snapshotJSON struct {
	*Snapshot
	Point         Point                 `json:"point"`
	Configuration *config.Configuration `json:"configuration"`
	NginxConf     string                `json:"nginxConf,omitempty"`
}

// WriteJSON writes the snapshot as one indented JSON document. Certificates
// keep their name, hosts and checksum; their PEM certificate and key are
// left out (null), as are the client certificates and keys of the backend
// TLS profiles. nginxConf, when not empty, is added as "nginxConf".
func (s *Snapshot) WriteJSON(w io.Writer, nginxConf []byte) error {
	return writeJSON(w, snapshotJSON{Snapshot: s, Point: s.Point, Configuration: withoutKeys(s.Configuration), NginxConf: string(nginxConf)})
}

// WriteJSON writes the timeline as one indented JSON document.
func (t *Timeline) WriteJSON(w io.Writer) error { return writeJSON(w, t) }

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// withoutKeys is a shallow copy of c whose certificates have no PEM data.
func withoutKeys(c *config.Configuration) *config.Configuration {
	if c == nil {
		return nil
	}
	out := *c
	out.Certificates = make([]config.Certificate, len(c.Certificates))
	for i, cert := range c.Certificates {
		cert.Cert, cert.Key = nil, nil
		out.Certificates[i] = cert
	}
	if c.UpstreamTLS != nil {
		out.UpstreamTLS = make([]config.UpstreamTLS, len(c.UpstreamTLS))
		for i, p := range c.UpstreamTLS {
			p.Cert, p.Key = nil, nil // the CA is public
			out.UpstreamTLS[i] = p
		}
	}
	return &out
}
