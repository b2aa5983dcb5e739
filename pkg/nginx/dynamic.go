package nginx

import (
	"context"
	"errors"
	"slices"

	"github.com/ingress-sync/ingress-sync/pkg/model"
)

// The pushes to the Lua endpoints. Callers hold a.mu.

// maxItemsPerPost bounds the items of one POST, so that a whole-state push
// (a restart, 16k hosts) is several requests of bounded size and decode time.
const maxItemsPerPost = 1000

// delta is one Apply's worth of pushes.
type delta struct {
	hosts              []Host
	hostsRemoved       []string
	checksum           string
	backends           []model.Backend
	backendsRemoved    []string
	certificates       []model.Certificate
	certificatesRemove []string
	defaultCertificate string // "" leaves it unchanged
}

// deltaOf turns a Change into pushes; extra adds the removals of what the
// Lua side holds beyond it (after a restart or a failed push).
func deltaOf(ch *model.Change, checksum string, extra *delta) delta {
	d := delta{
		hosts: hostsOf(ch.ServersUpserted), hostsRemoved: ch.ServersRemoved, checksum: checksum,
		backends: ch.BackendsUpserted, backendsRemoved: ch.BackendsRemoved,
		certificates: ch.CertificatesUpserted, certificatesRemove: ch.CertificatesRemoved,
		defaultCertificate: ch.DefaultCertificate,
	}
	if extra != nil {
		d.hostsRemoved = append(slices.Clone(d.hostsRemoved), extra.hostsRemoved...)
		d.backendsRemoved = append(slices.Clone(d.backendsRemoved), extra.backendsRemoved...)
		d.certificatesRemove = append(slices.Clone(d.certificatesRemove), extra.certificatesRemove...)
	}
	return d
}

// extras returns the removals of the hosts, backends and certificates the
// Lua side holds that next does not have.
func (a *Applier) extras(ctx context.Context, next *model.Configuration) (*delta, error) {
	routes, err := a.client.GetRoutes(ctx)
	if err != nil {
		return nil, err
	}
	backends, err := a.client.GetBackends(ctx)
	if err != nil {
		return nil, err
	}
	certs, err := a.client.GetCertificates(ctx)
	if err != nil {
		return nil, err
	}
	var d delta
	d.hostsRemoved = absent(routes.Hosts, func(h *Host) string { return h.Name }, next.Servers, func(s *model.Server) string { return s.Hostname })
	d.backendsRemoved = absent(backends.Backends, func(b *model.Backend) string { return b.Name }, next.Backends.Slice(), func(b **model.Backend) string { return (*b).Name })
	d.certificatesRemove = absent(certs.Certificates, func(c *CertificateInfo) string { return c.Name }, next.Certificates, func(c *model.Certificate) string { return c.Name })
	return &d, nil
}

// absent returns the names of have that want does not name, sorted.
func absent[H, W any](have []H, haveName func(*H) string, want []W, wantName func(*W) string) []string {
	keep := make(map[string]bool, len(want))
	for i := range want {
		keep[wantName(&want[i])] = true
	}
	var out []string
	for i := range have {
		if n := haveName(&have[i]); !keep[n] {
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
	err := chunks(d.backends, func(part []model.Backend) error {
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
