package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"errors"
	"slices"
)

// The pushes to the Lua endpoints. Callers hold a.mu.

// maxItemsPerPost bounds the items of one POST, so that a whole-state push
// (a restart, 16k hosts) is several requests of bounded size and decode time.
const maxItemsPerPost = 1000

// delta is one Apply's worth of pushes: a Change (deltaOf), or a whole
// state (stateOf) less what the Lua side holds (against).
type delta struct {
	hosts              []Host
	hostsRemoved       []string
	checksum           string
	backends           []config.Backend
	backendsRemoved    []string
	certificates       []config.Certificate
	certificatesRemove []string
	defaultCertificate string // "" leaves it unchanged
}

// deltaOf turns a Change into pushes.
func deltaOf(ch *config.Change, checksum string) delta {
	return delta{
		hosts: hostsOf(ch.ServersUpserted), hostsRemoved: ch.ServersRemoved, checksum: checksum,
		backends: ch.BackendsUpserted, backendsRemoved: ch.BackendsRemoved,
		certificates: ch.CertificatesUpserted, certificatesRemove: ch.CertificatesRemoved,
		defaultCertificate: ch.DefaultCertificate,
	}
}

// stateOf is the whole of cfg as pushes, for a data plane that may hold
// anything (see against). Its slices are copies: against shortens them.
func stateOf(cfg *config.Configuration) delta {
	backends := make([]config.Backend, 0, cfg.Backends.Len())
	for _, b := range cfg.Backends.All() {
		backends = append(backends, *b)
	}
	return delta{hosts: hostsOf(cfg.Servers), checksum: cfg.Checksum, backends: backends,
		certificates: slices.Clone(cfg.Certificates), defaultCertificate: cfg.DefaultCertificate}
}

// held is what the Lua side holds: the digest of each host, backend and
// certificate by name, and the default certificate's name.
type held struct {
	hosts, backends, certificates map[string]string
	defaultCertificate            string
}

// fetchHeld reads what the Lua side holds.
func (a *Applier) fetchHeld(ctx context.Context) (held, error) {
	routes, err := a.client.GetRoutes(ctx)
	if err != nil {
		return held{}, err
	}
	backends, err := a.client.GetBackends(ctx)
	if err != nil {
		return held{}, err
	}
	certs, err := a.client.GetCertificates(ctx)
	if err != nil {
		return held{}, err
	}
	h := held{hosts: make(map[string]string, len(routes.Hosts)), backends: make(map[string]string, len(backends.Backends)),
		certificates: make(map[string]string, len(certs.Certificates)), defaultCertificate: certs.DefaultCertificate}
	for _, x := range routes.Hosts {
		h.hosts[x.Name] = x.Digest
	}
	for _, b := range backends.Backends {
		h.backends[b.Name] = b.Checksum
	}
	for _, c := range certs.Certificates {
		h.certificates[c.Name] = c.Checksum
	}
	return h, nil
}

// against turns a whole-state delta into the difference with what the Lua
// side holds: what it holds with the same digest is not sent again, and
// what it holds beyond d is removed. A fresh nginx holds nothing, so all
// of d is sent; one that outlived its syncer or missed a failed push gets
// only what differs.
func (d *delta) against(h held) {
	d.hostsRemoved = append(slices.Clone(d.hostsRemoved), absent(h.hosts, d.hosts, func(x *Host) string { return x.Name })...)
	d.backendsRemoved = append(slices.Clone(d.backendsRemoved), absent(h.backends, d.backends, func(b *config.Backend) string { return b.Name })...)
	d.certificatesRemove = append(slices.Clone(d.certificatesRemove), absent(h.certificates, d.certificates, func(c *config.Certificate) string { return c.Name })...)
	d.hosts = slices.DeleteFunc(d.hosts, func(x Host) bool { return x.Digest != "" && h.hosts[x.Name] == x.Digest })
	d.backends = slices.DeleteFunc(d.backends, func(b config.Backend) bool { return b.Checksum != "" && h.backends[b.Name] == b.Checksum })
	d.certificates = slices.DeleteFunc(d.certificates, func(c config.Certificate) bool {
		return c.Checksum != "" && h.certificates[c.Name] == c.Checksum
	})
	if d.defaultCertificate == h.defaultCertificate {
		d.defaultCertificate = ""
	}
}

// absent returns the names held that want does not name, sorted.
func absent[W any](held map[string]string, want []W, name func(*W) string) []string {
	keep := make(map[string]bool, len(want))
	for i := range want {
		keep[name(&want[i])] = true
	}
	var out []string
	for n := range held {
		if !keep[n] {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// pushUpserts sends new and changed backends, then certificates (and the
// default certificate name), then the routes with their removals and the
// Configuration's checksum: a route arrives after what it uses.
func (a *Applier) pushUpserts(ctx context.Context, d *delta) error {
	err := chunks(d.backends, func(part []config.Backend) error {
		return a.post(ctx, func(v uint64) error {
			_, err := a.client.PostBackends(ctx, part, nil, v)
			return err
		})
	})
	if err != nil {
		return err
	}
	if len(d.certificates) > 0 || d.defaultCertificate != "" {
		err := a.post(ctx, func(v uint64) error {
			_, err := a.client.PostCertificates(ctx, d.certificates, nil, d.defaultCertificate, v)
			return err
		})
		if err != nil {
			return err
		}
	}
	return a.pushRoutes(ctx, d)
}

// pushRoutes sends the routes in chunks, then the removals and the
// checksum (so that the checksum says the whole table is there).
func (a *Applier) pushRoutes(ctx context.Context, d *delta) error {
	err := chunks(d.hosts, func(part []Host) error { return a.postHosts(ctx, part) })
	if err != nil {
		return err
	}
	return a.post(ctx, func(v uint64) error {
		_, err := a.client.PostRoutes(ctx, nil, d.hostsRemoved, d.checksum, v)
		return err
	})
}

// postHosts sends hosts in one POST. Should the data plane refuse it (which
// means a value model.Build let through that Lua cannot take), it sends them
// one by one, and each host it refuses is replaced by one that answers 503
// (fail closed: no older version of its routes keeps serving), with an
// error log. One bad host never blocks the others.
func (a *Applier) postHosts(ctx context.Context, hosts []Host) error {
	send := func(hs []Host) error {
		return a.post(ctx, func(v uint64) error {
			_, err := a.client.PostRoutes(ctx, hs, nil, "", v)
			return err
		})
	}
	err := send(hosts)
	if !errors.Is(err, ErrRejected) {
		return err
	}
	for _, h := range hosts {
		err := send([]Host{h})
		if !errors.Is(err, ErrRejected) {
			if err != nil {
				return err
			}
			continue
		}
		a.log.Error("host refused by the data plane; it answers 503", "host", h.Name, "err", err)
		if err := send([]Host{{Name: h.Name, Unavailable: true}}); err != nil {
			return err
		}
	}
	return nil
}

// pushRemovals removes certificates, then backends, that no route uses.
func (a *Applier) pushRemovals(ctx context.Context, d *delta) error {
	if len(d.certificatesRemove) > 0 {
		if err := a.post(ctx, func(v uint64) error {
			_, err := a.client.PostCertificates(ctx, nil, d.certificatesRemove, "", v)
			return err
		}); err != nil {
			return err
		}
	}
	return chunks(d.backendsRemoved, func(part []string) error {
		return a.post(ctx, func(v uint64) error {
			_, err := a.client.PostBackends(ctx, nil, part, v)
			return err
		})
	})
}

// chunks calls send with successive parts of at most maxItemsPerPost items.
func chunks[T any](items []T, send func([]T) error) error {
	for len(items) > 0 {
		n := min(len(items), maxItemsPerPost)
		if err := send(items[:n]); err != nil {
			return err
		}
		items = items[n:]
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
