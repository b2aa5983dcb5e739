package main

import (
	"github.com/ingress-sync/ingress-sync/pkg/gateway"
	"github.com/ingress-sync/ingress-sync/pkg/ingress"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// sources returns the function that makes the translators of every API
// the syncer serves, new: each Store gets its own (a source keeps the
// objects of its other kinds). A new source is one more entry here.
func (f *modelFlags) sources() func() []intent.Source {
	return func() []intent.Source {
		return []intent.Source{ingress.NewSource(), gateway.NewSource(f.gatewayController)}
	}
}
