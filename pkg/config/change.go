package config

// Change is the difference between the running Configuration and a new one,
// classified by how it can be applied. It is computed by Diff.
type Change struct {
	// Reload is true when nginx.conf itself must change: the global
	// settings (everything else is dynamic); ReloadReasons says what
	// differed, at most ten and then "and N more".
	Reload        bool     `json:"reload"`
	ReloadReasons []string `json:"reloadReasons,omitempty"`

	// The dynamic part, applied through the Lua endpoints without a reload:
	// the route tables of hosts (Servers) that are new or changed, and the
	// ServerKeys of those that are gone;
	// backends that are new or whose endpoints/balancing changed, backends
	// that are gone, certificates that are new or changed, and certificates
	// that are gone (by Name). All sorted by Name (Servers as
	// CompareServers sorts them).
	ServersUpserted      []Server      `json:"serversUpserted,omitempty"`
	ServersRemoved       []string      `json:"serversRemoved,omitempty"`
	BackendsUpserted     []Backend     `json:"backendsUpserted,omitempty"`
	BackendsRemoved      []string      `json:"backendsRemoved,omitempty"`
	CertificatesUpserted []Certificate `json:"certificatesUpserted,omitempty"`
	CertificatesRemoved  []string      `json:"certificatesRemoved,omitempty"`
	// DefaultCertificate is the Name of the new default certificate when it
	// changed (a dynamic change; the certificate itself is then also in
	// CertificatesUpserted), "" otherwise.
	DefaultCertificate string `json:"defaultCertificate,omitempty"`
}

// Empty reports whether nothing differs.
func (c Change) Empty() bool {
	return !c.Reload && !c.Dynamic()
}

// Dynamic reports whether the change has a part for the Lua endpoints.
func (c Change) Dynamic() bool {
	return len(c.ServersUpserted) > 0 || len(c.ServersRemoved) > 0 ||
		len(c.BackendsUpserted) > 0 || len(c.BackendsRemoved) > 0 ||
		len(c.CertificatesUpserted) > 0 || len(c.CertificatesRemoved) > 0 ||
		c.DefaultCertificate != ""
}
