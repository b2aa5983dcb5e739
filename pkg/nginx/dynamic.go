package nginx

import (
	"bytes"
	"context"
	"slices"

	"github.com/ingress-sync/ingress-sync/pkg/model"
)

// The Applier's record of the dynamic state (backends, certificates and the
// default certificate name) and the code that pushes it to Lua. Callers hold
// a.mu.

// delta is one push to the Lua endpoints.
type delta struct {
	backends           []model.Backend
	backendsRemoved    []string
	certificates       []model.Certificate
	certificatesRemove []string
	defaultCertificate string // "" leaves it unchanged
}

// setDynamic makes cfg's backends and certificates the recorded state.
func (a *Applier) setDynamic(cfg *model.Configuration) {
	a.backends = make(map[string]model.Backend, len(cfg.Backends))
	for _, b := range cfg.Backends {
		a.backends[b.Name] = b
	}
	a.certs = make(map[string]model.Certificate, len(cfg.Certificates))
	for _, c := range cfg.Certificates {
		a.certs[c.Name] = c
	}
	a.defaultCert = cfg.DefaultCertificate
}

// record applies d to the recorded state.
func (a *Applier) record(d *delta) {
	for _, b := range d.backends {
		a.backends[b.Name] = b
	}
	for _, n := range d.backendsRemoved {
		delete(a.backends, n)
	}
	for _, c := range d.certificates {
		a.certs[c.Name] = c
	}
	for _, n := range d.certificatesRemove {
		delete(a.certs, n)
	}
	if d.defaultCertificate != "" {
		a.defaultCert = d.defaultCertificate
	}
}

// syncDynamic pushes what differs between the recorded state and cfg: new
// and changed items always, removals only when withRemovals (after a reload,
// so that draining workers still find the backends of the old locations).
func (a *Applier) syncDynamic(ctx context.Context, cfg *model.Configuration, withRemovals bool) error {
	if a.dirty {
		a.setDynamic(cfg)
		return a.pushAll(ctx)
	}
	var d delta
	for _, b := range cfg.Backends {
		if old, ok := a.backends[b.Name]; !ok || !backendEqual(&old, &b) {
			d.backends = append(d.backends, b)
		}
	}
	for _, c := range cfg.Certificates {
		if old, ok := a.certs[c.Name]; !ok || !certificateEqual(&old, &c) {
			d.certificates = append(d.certificates, c)
		}
	}
	if cfg.DefaultCertificate != a.defaultCert {
		d.defaultCertificate = cfg.DefaultCertificate
	}
	if withRemovals {
		d.backendsRemoved = missing(a.backends, cfg.Backends, func(b *model.Backend) string { return b.Name })
		d.certificatesRemove = missing(a.certs, cfg.Certificates, func(c *model.Certificate) string { return c.Name })
	}
	a.record(&d)
	return a.push(ctx, &d)
}

// missing returns the sorted keys of have that want does not name.
func missing[T any](have map[string]T, want []T, name func(*T) string) []string {
	keep := make(map[string]bool, len(want))
	for i := range want {
		keep[name(&want[i])] = true
	}
	var out []string
	for n := range have {
		if !keep[n] {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// push sends one delta per kind that has changes. A failure marks the state
// dirty: the next call pushes everything.
func (a *Applier) push(ctx context.Context, d *delta) error {
	if len(d.backends)+len(d.backendsRemoved) > 0 {
		err := a.post(ctx, func(v uint64) error {
			_, err := a.client.PostBackends(ctx, d.backends, d.backendsRemoved, v)
			return err
		})
		if err != nil {
			a.dirty = true
			return err
		}
	}
	if len(d.certificates)+len(d.certificatesRemove) > 0 || d.defaultCertificate != "" {
		err := a.post(ctx, func(v uint64) error {
			_, err := a.client.PostCertificates(ctx, d.certificates, d.certificatesRemove, d.defaultCertificate, v)
			return err
		})
		if err != nil {
			a.dirty = true
			return err
		}
	}
	return nil
}

// post sends with the next version; when the Lua side holds a newer one
// (nginx outlived a previous syncer), it continues from there once.
func (a *Applier) post(ctx context.Context, send func(version uint64) error) error {
	a.version++
	err := send(a.version)
	if current, stale := isStale(err); stale {
		a.version = current + 1
		err = send(a.version)
	}
	return err
}

// pushAll sends every recorded item and removes what else Lua holds.
func (a *Applier) pushAll(ctx context.Context) error {
	haveB, err := a.client.GetBackends(ctx)
	if err != nil {
		return err
	}
	haveC, err := a.client.GetCertificates(ctx)
	if err != nil {
		return err
	}
	d := delta{backends: sortedValues(a.backends), certificates: sortedValues(a.certs), defaultCertificate: a.defaultCert}
	for _, b := range haveB.Backends {
		if _, ok := a.backends[b.Name]; !ok {
			d.backendsRemoved = append(d.backendsRemoved, b.Name)
		}
	}
	for _, c := range haveC.Certificates {
		if _, ok := a.certs[c.Name]; !ok {
			d.certificatesRemove = append(d.certificatesRemove, c.Name)
		}
	}
	a.dirty = false
	if err := a.push(ctx, &d); err != nil {
		return err
	}
	a.log.Info("dynamic state pushed", "backends", len(d.backends), "certificates", len(d.certificates),
		"backendsRemoved", len(d.backendsRemoved), "certificatesRemoved", len(d.certificatesRemove))
	return nil
}

func sortedValues[T any](m map[string]T) []T {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]T, 0, len(m))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

// backendEqual compares by Checksum when both have one (Build sets it).
func backendEqual(a, b *model.Backend) bool {
	if a.Checksum != "" && b.Checksum != "" {
		return a.Checksum == b.Checksum
	}
	return a.Name == b.Name && a.Namespace == b.Namespace && a.Service == b.Service && a.Port == b.Port &&
		a.LoadBalance == b.LoadBalance && a.UpstreamHashBy == b.UpstreamHashBy &&
		slices.Equal(a.Endpoints, b.Endpoints) && affinityEqual(a.Affinity, b.Affinity)
}

func affinityEqual(a, b *model.Affinity) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func certificateEqual(a, b *model.Certificate) bool {
	if a.Name != b.Name || a.Checksum != b.Checksum || !slices.Equal(a.Hosts, b.Hosts) {
		return false
	}
	return a.Checksum != "" || bytes.Equal(a.Cert, b.Cert) && bytes.Equal(a.Key, b.Key)
}
