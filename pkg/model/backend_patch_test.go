package model

import (
	"reflect"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/config"
)

// TestIncrementalChunks: at more Backends than a BackendList chunk holds,
// an endpoint patch shares every other Backend and equals Build.
func TestIncrementalChunks(t *testing.T) {
	in := NewIncremental(newTestStore(t, benchObjects(t, 600)...), testOptions())
	a := in.Build()
	if _, err := in.Apply(upsertEvent(slice("ns-1", "app-301-abcde", "app-301", "http", 8080, ready("10.9.9.9")))); err != nil {
		t.Fatal(err)
	}
	b := in.Build()
	if !reflect.DeepEqual(exported(b), exported(Build(in.Store(), testOptions()))) {
		t.Fatalf("incremental differs from Build: %s", firstDiff(b, Build(in.Store(), testOptions())))
	}
	copied := 0
	for i, be := range b.Backends.All() {
		if be != a.Backends.At(i) {
			copied++
		}
	}
	if b.Backends.Len() < 600 || copied != 1 {
		t.Errorf("%d of %d backends copied; want 1", copied, b.Backends.Len())
	}
	if ch := config.Diff(a, b); len(ch.BackendsUpserted) != 1 || len(ch.BackendsRemoved) != 0 {
		t.Errorf("Diff upserted %d, removed %v; want 1 upserted", len(ch.BackendsUpserted), ch.BackendsRemoved)
	}
}
