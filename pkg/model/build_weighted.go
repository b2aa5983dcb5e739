package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// weightedBackend is one of a location's weighted backends (Gateway API
// backendRefs): be nil answers its share of the requests 500.
type weightedBackend struct {
	be     *backendState
	weight int
	// requestHeaders is the backendRef's own request header filter.
	requestHeaders *config.HeaderFilter
}

// plain reports whether ws is one backend that resolves, without a filter
// of its own: routed as a plain backend.
func plain(ws []weightedBackend) bool {
	return len(ws) == 1 && ws[0].be != nil && ws[0].requestHeaders == nil
}

// weightedFor resolves the weighted backends of path p of e on host,
// once the path is served: nil for none. A reference its source marked
// Invalid, or one that does not resolve (an unknown Service or port),
// answers its share 500, the latter with a Problem.
func (b *builder) weightedFor(e *intent.Entry, host string, p *intent.Path) []weightedBackend {
	if len(p.Weighted) == 0 {
		return nil
	}
	out := make([]weightedBackend, len(p.Weighted))
	for i, w := range p.Weighted {
		out[i].weight, out[i].requestHeaders = w.Weight, w.RequestHeaders
		if w.Invalid {
			continue
		}
		be, err := b.backendFor(e.Key.Namespace, w.Backend)
		if err != nil {
			b.entryProblem(e, "host %s path %s: backend %s: %v; its share of the requests answers 500", host, p.Path, w.Backend.Service, err)
			continue
		}
		be.use(e)
		out[i].be = be
	}
	return out
}

// weightedOf is the Location's Backends of ws, once backends are named.
func weightedOf(ws []weightedBackend) []config.WeightedBackend {
	if len(ws) == 0 {
		return nil
	}
	out := make([]config.WeightedBackend, len(ws))
	for i, w := range ws {
		out[i].Weight, out[i].RequestHeaders = w.weight, w.requestHeaders
		if w.be != nil {
			out[i].Backend = w.be.name
		}
	}
	return out
}
