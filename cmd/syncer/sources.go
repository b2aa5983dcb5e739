package main

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// newSources returns the translators of every API the syncer serves, new:
// each Store gets its own (a source keeps the objects of its other kinds).
// A new source is one more entry here.
func newSources() []intent.Source {
	return []intent.Source{ingress.NewSource()}
}
