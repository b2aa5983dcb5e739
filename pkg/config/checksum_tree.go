package config

import (
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"strings"
)

// The checksum of a Configuration is made of the checksums of its parts,
// so that a change of a few parts costs work in proportion to them (see
// Incremental): the Servers, the Backends and the Certificates are each a
// sumTree of (name, part checksum) entries, and the Configuration's
// checksum hashes the roots of the three trees with the rest.
//
// A sumTree spreads its entries over sumBuckets buckets by a hash of the
// name; a bucket's sum is the SHA-256 of its entries sorted by name, a
// group's the SHA-256 of the sums of its sumGroup buckets, and the root
// the SHA-256 of the group sums, each in order (sums truncated to 16
// bytes): updating one entry rehashes its bucket and 2 x 256 bytes. The structure
// depends only on the set of entries, so a tree updated entry by entry
// and one built at once from the same entries have the same root.

// sumBuckets is the number of buckets of a sumTree, in groups of
// sumGroup.
const (
	sumBuckets = 256
	sumGroup   = 16
)

type sumEntry struct{ name, sum string }

type sumTree struct {
	buckets [sumBuckets][]sumEntry
	// sums holds the 16-byte sum of each bucket, groups that of each
	// group, in order.
	sums    [sumBuckets * 16]byte
	groups  [sumBuckets / sumGroup * 16]byte
	dirty   [sumBuckets]bool
	buf     []byte
	anyDirt bool
	// last is the root as of the last call with nothing dirty since.
	last [16]byte
}

// newSumTree returns an empty tree whose buckets all need a sum.
func newSumTree() *sumTree {
	t := &sumTree{anyDirt: true}
	for i := range t.dirty {
		t.dirty[i] = true
	}
	return t
}

// bucketOf is FNV-1a of name, modulo sumBuckets.
func bucketOf(name string) int {
	h := uint32(2166136261)
	for i := 0; i < len(name); i++ {
		h ^= uint32(name[i])
		h *= 16777619
	}
	return int(h % sumBuckets)
}

func compareEntries(a, b sumEntry) int { return strings.Compare(a.name, b.name) }

// add adds an entry of a name the tree does not hold, in any order; call
// seal once all are added.
func (t *sumTree) add(name, sum string) {
	i := bucketOf(name)
	t.buckets[i] = append(t.buckets[i], sumEntry{name, sum})
	t.dirty[i], t.anyDirt = true, true
}

// seal sorts the buckets filled by add.
func (t *sumTree) seal() {
	for i := range t.buckets {
		if t.dirty[i] {
			slices.SortFunc(t.buckets[i], compareEntries)
		}
	}
}

// set puts (name, sum), replacing the entry of that name.
func (t *sumTree) set(name, sum string) {
	i := bucketOf(name)
	b := t.buckets[i]
	j, found := slices.BinarySearchFunc(b, sumEntry{name: name}, compareEntries)
	if found {
		if b[j].sum == sum {
			return
		}
		b[j].sum = sum
	} else {
		t.buckets[i] = slices.Insert(b, j, sumEntry{name, sum})
	}
	t.dirty[i], t.anyDirt = true, true
}

// remove removes the entry of name, if any.
func (t *sumTree) remove(name string) {
	i := bucketOf(name)
	b := t.buckets[i]
	if j, found := slices.BinarySearchFunc(b, sumEntry{name: name}, compareEntries); found {
		t.buckets[i] = slices.Delete(b, j, j+1)
		t.dirty[i], t.anyDirt = true, true
	}
}

// root returns the tree's sum, rehashing the buckets that changed.
func (t *sumTree) root() [16]byte {
	if !t.anyDirt {
		return t.last
	}
	for i := range t.buckets {
		if !t.dirty[i] {
			continue
		}
		buf := binary.AppendUvarint(t.buf[:0], uint64(len(t.buckets[i])))
		for _, e := range t.buckets[i] {
			buf = binary.AppendUvarint(buf, uint64(len(e.name)))
			buf = append(buf, e.name...)
			buf = binary.AppendUvarint(buf, uint64(len(e.sum)))
			buf = append(buf, e.sum...)
		}
		d := sha256.Sum256(buf)
		copy(t.sums[16*i:16*i+16], d[:16])
		t.buf = buf
	}
	for g := range sumBuckets / sumGroup {
		lo, hi := g*sumGroup, (g+1)*sumGroup
		if !slices.Contains(t.dirty[lo:hi], true) {
			continue
		}
		d := sha256.Sum256(t.sums[16*lo : 16*hi])
		copy(t.groups[16*g:16*g+16], d[:16])
		clear(t.dirty[lo:hi])
	}
	t.anyDirt = false
	d := sha256.Sum256(t.groups[:])
	copy(t.last[:], d[:16])
	return t.last
}

// Sums are the trees of a Configuration's checksum, and the sum of
// its Global as of the last checksum (global, globalSum).
type Sums struct {
	servers, backends, certs *sumTree
	global                   *Global
	globalSum                string
}

// newConfigSums computes the trees of c. With trustParts, the Checksum
// fields of Backends and Certificates are taken as they are.
func newConfigSums(c *Configuration, trustParts bool) *Sums {
	ws := writerPool.Get().(*checksumWriters)
	defer writerPool.Put(ws)
	part := ws.part
	s := &Sums{servers: newSumTree(), backends: newSumTree(), certs: newSumTree()}
	for i := range c.Servers {
		s.servers.add(c.Servers[i].Key(), part.serverSum(&c.Servers[i]))
	}
	for _, b := range c.Backends.All() {
		sum := b.Checksum
		if !trustParts || sum == "" {
			sum = part.backendSum(b, SumEndpoints(b.Endpoints))
		}
		s.backends.add(b.Name, sum)
	}
	for i := range c.Certificates {
		s.certs.add(c.Certificates[i].Name, part.certEntry(&c.Certificates[i], trustParts))
	}
	s.servers.seal()
	s.backends.seal()
	s.certs.seal()
	return s
}

// serverSum is the checksum of one Server's canonical encoding.
func (w *canonicalWriter) serverSum(s *Server) string {
	w.reset()
	w.server(s)
	return w.sum()
}

// certEntry is a certificate's tree entry: its hosts and content. The
// generated fallback certificate counts by name and hosts only: every
// syncer (and every replay) generates its own at start, and its content
// must not make their checksums differ.
func (w *canonicalWriter) certEntry(cert *Certificate, trustParts bool) string {
	sum := ""
	if cert.Name != FallbackCertificateName {
		sum = cert.Checksum
		if !trustParts || sum == "" {
			sum = w.certSum(cert.Cert, cert.Key)
		}
	}
	w.reset()
	w.strs(cert.Hosts)
	w.str(sum)
	return w.sum()
}

// checksum hashes c with the roots of its trees s and the sum of its
// Global (which changes seldom).
func (s *Sums) checksum(c *Configuration) string {
	ws := writerPool.Get().(*checksumWriters)
	defer writerPool.Put(ws)
	if s.global == nil || *s.global != c.Global {
		g := c.Global
		ws.part.reset()
		ws.part.global(&g)
		s.global, s.globalSum = &g, ws.part.sum()
	}
	w := ws.whole
	w.reset()
	w.str(s.globalSum)
	for _, t := range []*sumTree{s.servers, s.backends, s.certs} {
		r := t.root()
		w.buf = append(w.buf, r[:]...)
	}
	w.str(c.DefaultCertificate)
	w.str(c.DefaultBackend)
	w.upstreamTLS(c.UpstreamTLS)
	w.l4(c.L4, c.Passthrough)
	w.streams(c.Streams)
	w.listeners(c.Listeners)
	return w.sum()
}
