package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// mirrorTarget is one mirror of a location: be, the Backend of a
// backendRef (nil for a URL mirror), and what the copies carry.
type mirrorTarget struct {
	be   *backendState
	spec config.Mirror
}

// mirrorsFor resolves the mirrors of path p of e on host, once the path
// is served: the path's (Gateway API RequestMirror filters), then the
// Ingress's (mirror-target). A backendRef that does not resolve is left
// out with a Problem; the path is served as it would be without it.
func (b *builder) mirrorsFor(e *intent.Entry, host string, p *intent.Path) []mirrorTarget {
	var out []mirrorTarget
	for i := range p.Mirrors {
		m := &p.Mirrors[i]
		be, err := b.backendFor(e.Key.Namespace, m.Backend)
		if err != nil {
			b.entryProblem(e, "host %s path %s: mirror backend %s: %v; mirror left out", host, p.Path, m.Backend.Service, err)
			continue
		}
		be.use(e)
		out = append(out, mirrorTarget{be: be, spec: m.Spec})
	}
	if m := e.Settings.Mirror; m != nil {
		out = append(out, mirrorTarget{spec: *m})
	}
	return out
}

// mirrorsOf is the Location's Mirrors of ms, once backends are named.
func mirrorsOf(ms []mirrorTarget) []config.Mirror {
	if len(ms) == 0 {
		return nil
	}
	out := make([]config.Mirror, len(ms))
	for i, m := range ms {
		out[i] = m.spec
		if m.be != nil {
			out[i].Backend = m.be.name
		}
	}
	return out
}
