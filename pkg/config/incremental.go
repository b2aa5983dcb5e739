package config

// patchHint tells Diff what an Incremental patch changed from the
// Configuration of generation base: only the Backends at these indexes.
// It names the base by its generation token, not by pointer, so that a
// chain of patches keeps no old Configuration alive.
//
// A splice of Ingress changes (see incremental_hosts.go) says instead that
// only the Servers of hosts may differ (and any Backend: spliced).
type patchHint struct {
	base     *generation
	backends []int
	hosts    []string
	spliced  bool
}

// generation identifies one Configuration an Incremental returned: a
// token of its own (not zero-sized, so that no two share an address).
type generation struct{ _ byte }

// What an incremental builder needs from the contract: it patches a
// Configuration it built before instead of building a new one, keeps the
// checksum trees of that Configuration (Sums) and updates the parts it
// changes, and tells Diff which parts those are (PatchedFrom, SplicedFrom),
// so that both cost the change and not the whole Configuration.

// NewGeneration gives c a generation token of its own, with no patch
// hint: a Configuration built whole that later patches may name as base.
func (c *Configuration) NewGeneration() {
	c.gen, c.patch = new(generation), nil
}

// PatchedFrom says that c is base with only the Backends at these indexes
// changed (their endpoints), and gives c a generation of its own.
func (c *Configuration) PatchedFrom(base *Configuration, backends []int) {
	c.gen, c.patch = new(generation), &patchHint{base: base.gen, backends: backends}
}

// SplicedFrom says that c is base with only the Servers of hosts (sorted)
// changed, and any Backend, and gives c a generation of its own.
func (c *Configuration) SplicedFrom(base *Configuration, hosts []string) {
	c.gen, c.patch = new(generation), &patchHint{base: base.gen, hosts: hosts, spliced: true}
}

// NewSums computes the checksum trees of c, taking the Checksum fields of
// its Backends and Certificates as they are (the builder has just computed
// them).
func NewSums(c *Configuration) *Sums { return newConfigSums(c, true) }

// Checksum is the Configuration checksum of c from the trees of s, which
// must hold c's parts.
func (s *Sums) Checksum(c *Configuration) string { return s.checksum(c) }

// SetBackend records the checksum of the Backend name.
func (s *Sums) SetBackend(name, sum string) { s.backends.set(name, sum) }

// RemoveBackend forgets the Backend name.
func (s *Sums) RemoveBackend(name string) { s.backends.remove(name) }

// SetServer records the tree entry of a Server (Hasher.Server).
func (s *Sums) SetServer(hostname, sum string) { s.servers.set(hostname, sum) }

// RemoveServer forgets the Server of hostname.
func (s *Sums) RemoveServer(hostname string) { s.servers.remove(hostname) }

// SetCertificate records the tree entry of a Certificate
// (Hasher.CertificateEntry).
func (s *Sums) SetCertificate(name, sum string) { s.certs.set(name, sum) }

// RemoveCertificate forgets the Certificate name.
func (s *Sums) RemoveCertificate(name string) { s.certs.remove(name) }

// ChecksumTrustingParts is the checksum of c taking the Checksum fields of
// its Backends and Certificates as they are (ComputeChecksum recomputes
// them).
func ChecksumTrustingParts(c *Configuration) string { return configChecksum(c, true) }

// Hasher computes the checksums of parts one at a time, reusing one
// buffer: not safe for concurrent use.
type Hasher struct{ w *canonicalWriter }

// NewHasher returns a Hasher.
func NewHasher() *Hasher { return &Hasher{w: newCanonicalWriter(smallWriter)} }

// Backend is the checksum of b whose Endpoints have the digest eps
// (SumEndpoints), as stored in Backend.Checksum.
func (h *Hasher) Backend(b *Backend, eps EndpointsSum) string { return h.w.backendSum(b, eps) }

// Server is the tree entry of s for Sums.SetServer.
func (h *Hasher) Server(s *Server) string { return h.w.serverSum(s) }

// CertificateEntry is the tree entry of c for Sums.SetCertificate, taking
// c.Checksum as it is when set.
func (h *Hasher) CertificateEntry(c *Certificate) string { return h.w.certEntry(c, true) }

// Content is a copy of c without the bookkeeping of the incremental
// builder (generation and patch hint): two Configurations with the same
// content compare equal with reflect.DeepEqual.
func (c *Configuration) Content() Configuration {
	x := *c
	x.gen, x.patch = nil, nil
	return x
}

// Patched reports whether an incremental builder made c by patching the
// Configuration before it, rather than building it whole.
func (c *Configuration) Patched() bool { return c.patch != nil }

// Spliced reports whether c was made by rebuilding only some hosts of the
// Configuration before it (SplicedFrom).
func (c *Configuration) Spliced() bool { return c.patch != nil && c.patch.spliced }
