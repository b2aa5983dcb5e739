package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"sync"
)

// checksumVersion starts every canonical encoding, so that a change of the
// encoding changes every checksum.
const checksumVersion = "ingress-sync/model/v3"

// canonicalWriter writes values in a fixed, unambiguous binary form (strings
// length-prefixed, integers fixed-width, slices count-prefixed) into
// SHA-256. Checksums are the first 128 bits, hex-encoded.
type canonicalWriter struct {
	h   hash.Hash
	buf []byte
	// flushed is set once part of the input went to h; until then sum
	// hashes buf in one call.
	flushed bool
	// encodeOnly keeps the whole encoding in buf (h is nil): see
	// ServerEqual.
	encodeOnly bool
}

// Buffer sizes: writers flush to the hash at flushAt; a small writer is
// for one-off checksums of a Backend or Certificate.
const (
	flushAt     = 32 << 10
	largeWriter = flushAt + 512
	smallWriter = 1 << 10
)

func newCanonicalWriter(size int) *canonicalWriter {
	return &canonicalWriter{h: sha256.New(), buf: make([]byte, 0, size)}
}

// writerPool reuses the writers of configChecksum: every Build checksums
// the whole Configuration, and replay builds once per event.
var writerPool = sync.Pool{New: func() any {
	return &checksumWriters{whole: newCanonicalWriter(largeWriter), part: newCanonicalWriter(smallWriter)}
}}

type checksumWriters struct{ whole, part *canonicalWriter }

func (w *canonicalWriter) reset() {
	w.h.Reset()
	w.buf = w.buf[:0]
	w.flushed = false
	w.str(checksumVersion)
}

func (w *canonicalWriter) flush() {
	w.h.Write(w.buf)
	w.buf = w.buf[:0]
	w.flushed = true
}

func (w *canonicalWriter) flushIfFull() {
	if len(w.buf) >= flushAt && !w.encodeOnly {
		w.flush()
	}
}

func (w *canonicalWriter) uint(v uint64) {
	w.buf = binary.BigEndian.AppendUint64(w.buf, v)
}

func (w *canonicalWriter) int(v int64) { w.uint(uint64(v)) }

func (w *canonicalWriter) bool(b bool) {
	if b {
		w.buf = append(w.buf, 1)
	} else {
		w.buf = append(w.buf, 0)
	}
}

func (w *canonicalWriter) str(s string) {
	w.buf = binary.AppendUvarint(w.buf, uint64(len(s)))
	w.buf = append(w.buf, s...)
	w.flushIfFull()
}

func (w *canonicalWriter) bytes(b []byte) {
	w.buf = binary.AppendUvarint(w.buf, uint64(len(b)))
	if len(b) > flushAt {
		w.flush()
		w.h.Write(b)
		return
	}
	w.buf = append(w.buf, b...)
	w.flushIfFull()
}

func (w *canonicalWriter) strs(s []string) {
	w.uint(uint64(len(s)))
	for _, v := range s {
		w.str(v)
	}
}

// sum returns the hex-encoded first 128 bits of the digest.
func (w *canonicalWriter) sum() string {
	var d [sha256.Size]byte
	if w.flushed {
		w.flush()
		w.h.Sum(d[:0])
	} else {
		d = sha256.Sum256(w.buf)
	}
	w.buf = w.buf[:0]
	return hex.EncodeToString(d[:16])
}

// EndpointsSum is the digest of an endpoint list, part of a Backend's
// checksum. The Store computes it once per EndpointSlice port, so that
// Build does not read the endpoints of unchanged backends.
type EndpointsSum [16]byte

func SumEndpoints(eps []Endpoint) EndpointsSum {
	buf := make([]byte, 0, 512)
	buf = binary.AppendUvarint(buf, uint64(len(eps)))
	for _, e := range eps {
		buf = binary.AppendUvarint(buf, uint64(len(e.Address)))
		buf = append(buf, e.Address...)
		buf = binary.BigEndian.AppendUint32(buf, uint32(e.Port))
	}
	d := sha256.Sum256(buf)
	return EndpointsSum(d[:16])
}

// BackendChecksum returns the checksum of everything in b except
// b.Checksum: two backends with equal checksums need not be resent.
func BackendChecksum(b *Backend) string {
	w := newCanonicalWriter(smallWriter)
	return w.backendSum(b, SumEndpoints(b.Endpoints))
}

// backendSum hashes b with eps, the sumEndpoints of b.Endpoints.
func (w *canonicalWriter) backendSum(b *Backend, eps EndpointsSum) string {
	w.reset()
	w.str(b.Name)
	w.str(b.Namespace)
	w.str(b.Service)
	w.str(b.Port)
	w.buf = append(w.buf, eps[:]...)
	w.str(b.LoadBalance)
	w.str(b.UpstreamHashBy)
	w.bool(b.Affinity != nil)
	if a := b.Affinity; a != nil {
		w.str(a.CookieName)
		w.str(a.CookiePath)
		w.int(int64(a.CookieMaxAge))
		for _, s := range []string{a.Mode, a.CookieDomain, a.CookieSameSite} {
			w.str(s)
		}
		w.int(int64(a.CookieExpires))
		w.bool(a.CookieSecure)
		w.bool(a.ConditionalSameSiteNone)
		w.bool(a.ChangeOnFailure)
	}
	// Last and only when set, so that the checksums of backends without
	// it stay as they were (every part before is self-delimiting).
	if b.UpstreamHashBySubsetSize != 0 {
		w.int(int64(b.UpstreamHashBySubsetSize))
	}
	return w.sum()
}

// CertificateChecksum returns the checksum of a PEM certificate chain and
// key, as stored in Certificate.Checksum.
func CertificateChecksum(cert, key []byte) string { return certChecksum(cert, key) }

func certChecksum(cert, key []byte) string {
	return newCanonicalWriter(smallWriter).certSum(cert, key)
}

func (w *canonicalWriter) certSum(cert, key []byte) string {
	w.reset()
	w.bytes(cert)
	w.bytes(key)
	return w.sum()
}

// ComputeChecksum returns the checksum of c from its content: Global,
// Servers, Backends, Certificates, DefaultCertificate and DefaultBackend,
// but not Problems, nor the content of the generated fallback certificate
// (its name and hosts count), nor the Checksum fields of c, its Backends and its
// Certificates (those are recomputed).
func (c *Configuration) ComputeChecksum() string {
	return configChecksum(c, false)
}

// configChecksum hashes c. With trustParts, the Checksum fields of Backends
// and Certificates are taken as they are (Build has just computed them).
func configChecksum(c *Configuration, trustParts bool) string {
	return newConfigSums(c, trustParts).checksum(c)
}

func (w *canonicalWriter) global(g *Global) { g.canonical(w) }

func (w *canonicalWriter) server(s *Server) {
	w.str(s.Key()) // the Hostname alone on nginx's own ports
	w.bool(s.TLS)
	w.bool(s.SSLRedirect)
	w.str(s.AppRoot)
	w.str(s.RedirectTo)
	w.headers(s.RequestHeaders)
	w.headers(s.ResponseHeaders)
	w.bool(s.Block != nil)
	if s.Block != nil {
		w.strs(s.Block.CIDRs)
		w.strs(s.Block.UserAgents)
		w.strs(s.Block.Referers)
	}
	w.clientAuth(s.ClientAuth)
	if len(s.Listeners) > 0 { // optional: the checksums of other Servers stay
		w.str("+listeners")
		w.strs(s.Listeners)
	}
	w.uint(uint64(len(s.Locations)))
	for i := range s.Locations {
		l := &s.Locations[i]
		w.str(l.Path)
		w.str(string(l.PathType))
		w.str(l.Backend)
		w.str(l.Ingress)
		w.settings(&l.Settings)
		w.canary(l.Canary)
		w.match(l.Match)
		w.filters(l.Filters)
		w.weighted(l.Backends)
		w.timeouts(l.Timeouts)
		w.mirrors(l.Mirrors)
		if l.Kind != "" { // optional, as the parts above: Ingress checksums stay
			w.str("+kind")
			w.str(l.Kind)
		}
	}
}

func (w *canonicalWriter) settings(s *LocationSettings) {
	w.int(int64(s.ProxyConnectTimeout))
	w.int(int64(s.ProxyReadTimeout))
	w.int(int64(s.ProxySendTimeout))
	w.str(string(s.ProxyBodySize))
	w.str(s.BackendProtocol)
	w.str(s.RewriteTarget)
	w.strs(s.AllowSourceRange)
	w.strs(s.DenySourceRange)
	w.bool(s.SourceRangeInvalid)
	w.bool(s.SSLRedirect != nil)
	if s.SSLRedirect != nil {
		w.bool(*s.SSLRedirect)
	}
	w.bool(s.PreserveTrailingSlash)
	w.bool(s.UsePortInRedirects)
	w.str(s.XForwardedPrefix)
	w.bool(s.Redirect != nil)
	if r := s.Redirect; r != nil {
		w.str(r.URL)
		w.int(int64(r.Code))
	}
	w.bool(s.CORS != nil)
	if c := s.CORS; c != nil {
		w.bool(c.Origins != nil)
		w.strs(c.Origins)
		w.str(c.Methods)
		w.str(c.Headers)
		w.str(c.Expose)
		w.bool(c.Credentials)
		w.int(int64(c.MaxAge))
	}
	w.str(s.UpstreamVhost)
	w.str(s.ConnectionHeader)
	w.headers(s.ResponseHeaders)
	w.bool(s.Proxy != nil)
	if p := s.Proxy; p != nil {
		w.proxySettings(p)
	}
	w.bool(s.Errors != nil)
	if e := s.Errors; e != nil {
		w.int(int64(len(e.Codes)))
		for _, c := range e.Codes {
			w.int(int64(c))
		}
		w.str(e.Backend)
		w.bool(e.Fallback)
		w.bool(e.NoIntercept)
		w.bool(e.Global)
		w.str(e.Service)
		w.str(e.ServicePort)
	}
	w.bool(s.BasicAuth != nil)
	if a := s.BasicAuth; a != nil {
		w.str(a.Realm)
		w.bool(a.Unavailable)
		w.bool(a.SatisfyAny)
		w.bool(a.Digest)
		w.uint(uint64(len(a.Users)))
		for _, u := range a.Users {
			w.str(u.Name)
			w.str(u.Hash)
		}
	}
	w.rateLimit(s.RateLimit)
	w.externalAuth(s.ExternalAuth)
	w.proxySSL(s.ProxySSL)
	w.clientAuthClosed(s.ClientAuthUnavailable)
	w.modSecurity(s.ModSecurity)
	w.tracing(s.Tracing)
	if s.CustomHeadersUnavailable { // nothing when false: Locations keep their encoding
		w.str("customHeadersUnavailable")
	}
}

// encoderPool holds pairs of encode-only writers for ServerEqual, which
// Diff calls for every Server of every Build.
var encoderPool = sync.Pool{New: func() any {
	return &[2]canonicalWriter{{buf: make([]byte, 0, smallWriter), encodeOnly: true}, {buf: make([]byte, 0, smallWriter), encodeOnly: true}}
}}

// ServerEqual reports whether a and b are equal in every field, locations
// compared in order (Build sorts them): their canonical encodings, the
// ones the Configuration checksum hashes, so that a field is compared
// wherever it is hashed.
func ServerEqual(a, b *Server) bool {
	if a.Hostname != b.Hostname || a.Port != b.Port || len(a.Locations) != len(b.Locations) {
		return false
	}
	p := encoderPool.Get().(*[2]canonicalWriter)
	defer encoderPool.Put(p)
	x, y := &p[0], &p[1]
	x.buf, y.buf = x.buf[:0], y.buf[:0]
	x.server(a)
	y.server(b)
	return bytes.Equal(x.buf, y.buf)
}

// Equal reports whether c and o serve the same thing: equal checksums
// (Problems are not compared). Stored checksums are used when both are set.
func (c *Configuration) Equal(o *Configuration) bool {
	if c == nil || o == nil {
		return c == o
	}
	a, b := c.Checksum, o.Checksum
	if a == "" {
		a = c.ComputeChecksum()
	}
	if b == "" {
		b = o.ComputeChecksum()
	}
	return a == b
}

func (w *canonicalWriter) proxySettings(p *ProxySettings) {
	for _, v := range []string{p.Buffering, p.RequestBuffering, p.HTTPVersion, p.RedirectFrom, p.RedirectTo,
		p.CookieDomainFrom, p.CookieDomainTo, p.CookiePathFrom, p.CookiePathTo} {
		w.str(v)
	}
	w.int(int64(p.NextUpstreamTries))
	w.bool(p.NoAccessLog)
}

// l4 writes the TCP and UDP services and the passthrough hosts, only when
// there are any, so that the checksums of configurations without them stay
// as they were.
// listeners writes the Gateway listener ports, nothing when there are
// none (the checksums of Configurations without them are as before).
func (w *canonicalWriter) listeners(ls []Listener) {
	if len(ls) == 0 {
		return
	}
	w.str("listeners")
	w.uint(uint64(len(ls)))
	for _, l := range ls {
		w.int(int64(l.Port))
		w.bool(l.TLS)
		w.str(l.Gateway)
		if l.H2C { // only when set: the checksums of the others are as before
			w.str("h2c")
		}
	}
}

func (w *canonicalWriter) l4(svcs []L4Service, hosts []PassthroughHost) {
	if len(svcs) == 0 && len(hosts) == 0 {
		return
	}
	w.str("l4")
	w.uint(uint64(len(svcs)))
	for i := range svcs {
		s := &svcs[i]
		w.strs([]string{string(s.Protocol), s.Namespace, s.Service, s.ServicePort})
		w.int(int64(s.Port))
		w.bool(s.DecodeProxy)
		w.bool(s.EncodeProxy)
		w.endpoints(s.Endpoints)
	}
	w.uint(uint64(len(hosts)))
	for i := range hosts {
		h := &hosts[i]
		w.strs([]string{h.Hostname, h.Ingress, h.Backend})
		w.endpoints(h.Endpoints)
	}
}

func (w *canonicalWriter) streams(list []Stream) {
	if len(list) == 0 {
		return
	}
	w.str("streams")
	w.uint(uint64(len(list)))
	for i := range list {
		s := &list[i]
		w.strs([]string{string(s.Protocol), s.Hostname, s.Gateway, s.Route})
		w.int(int64(s.Port))
		w.uint(uint64(len(s.Backends)))
		for j := range s.Backends {
			b := &s.Backends[j]
			w.strs([]string{b.Namespace, b.Service})
			w.int(int64(b.Port))
			w.int(int64(b.Weight))
			w.endpoints(b.Endpoints)
		}
	}
}

func (w *canonicalWriter) endpoints(eps []Endpoint) {
	w.uint(uint64(len(eps)))
	for _, e := range eps {
		w.str(e.Address)
		w.int(int64(e.Port))
	}
}
