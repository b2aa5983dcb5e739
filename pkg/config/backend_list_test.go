package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// namedBackends returns n Backends named b-00000, b-00001, ... in order.
func namedBackends(n int) []*Backend {
	out := make([]*Backend, n)
	for i := range out {
		out[i] = &Backend{Name: fmt.Sprintf("b-%05d", i), Checksum: fmt.Sprint(i),
			Endpoints: []Endpoint{{Address: "<10.0.0.1>", Port: 80}}}
	}
	return out
}

// TestBackendListLayout: every chunk is full but the last, and the
// accessors agree with the slice the list was made of.
func TestBackendListLayout(t *testing.T) {
	for _, n := range []int{0, 1, 255, 256, 257, 600, 1024} {
		bs := namedBackends(n)
		l := NewBackendList(slices.Clone(bs))
		if l.Len() != n || !slices.Equal(l.Slice(), bs) {
			t.Fatalf("n=%d: Len %d, Slice differs", n, l.Len())
		}
		for i, c := range l.chunks {
			if len(c) != backendChunk && i != len(l.chunks)-1 || len(c) == 0 {
				t.Fatalf("n=%d: chunk %d has %d Backends", n, i, len(c))
			}
		}
		for i, b := range l.All() {
			if b != bs[i] || l.At(i) != bs[i] {
				t.Fatalf("n=%d: Backend %d differs", n, i)
			}
		}
		for _, r := range [][2]int{{0, n}, {0, n / 2}, {n / 3, n}, {n / 4, 3 * n / 4}, {n, n}} {
			if got := l.span(r[0], r[1]); !slices.Equal(got, bs[r[0]:r[1]]) {
				t.Fatalf("n=%d: span%v = %d Backends", n, r, len(got))
			}
		}
	}
}

func TestBackendListFind(t *testing.T) {
	l := NewBackendList(namedBackends(600))
	for _, i := range []int{0, 255, 256, 599} {
		if b, j, ok := l.Find(fmt.Sprintf("b-%05d", i)); !ok || j != i || b != l.At(i) {
			t.Errorf("Find %d = %v, %d, %v", i, b, j, ok)
		}
	}
	for _, name := range []string{"a", "b-00256x", "z"} {
		if _, _, ok := l.Find(name); ok {
			t.Errorf("Find %q found", name)
		}
	}
	if _, _, ok := (BackendList{}).Find("a"); ok {
		t.Error("Find in the empty list found")
	}
}

// TestBackendListJSON: a BackendList is written as the []*Backend it holds
// was, with or without HTML escaping, and read back.
func TestBackendListJSON(t *testing.T) {
	for _, n := range []int{0, 2, 300} {
		bs := namedBackends(n)
		l := NewBackendList(bs)
		for _, escape := range []bool{true, false} {
			want, got := encodeJSON(t, escape, struct {
				B []*Backend `json:"b"`
			}{append([]*Backend{}, bs...)}), encodeJSON(t, escape, struct {
				B BackendList `json:"b"`
			}{l})
			if !bytes.Equal(got, want) {
				t.Fatalf("n=%d escape=%v:\n got  %.200s\n want %.200s", n, escape, got, want)
			}
		}
		var back BackendList
		if err := json.Unmarshal(encodeJSON(t, true, l), &back); err != nil || !reflect.DeepEqual(back, l) {
			t.Fatalf("n=%d: read back %d Backends, %v", n, back.Len(), err)
		}
	}
}

func encodeJSON(t *testing.T, escapeHTML bool, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestBackendListPatch: a patch copies only the chunk index and the chunks
// it changes, leaves its base alone, and equals the list built whole.
func TestBackendListPatch(t *testing.T) {
	bs := namedBackends(1000)
	base := NewBackendList(slices.Clone(bs))
	l := base.Patched()
	want := slices.Clone(bs)
	for _, i := range []int{3, 700, 701} {
		b := *bs[i]
		b.Checksum = "changed"
		l.Replace(i, &b, base)
		want[i] = &b
	}
	if !reflect.DeepEqual(l, NewBackendList(want)) || !slices.Equal(base.Slice(), bs) {
		t.Fatal("the patch differs from the list built whole, or changed its base")
	}
	for i := range l.chunks {
		if shared := sameArray(l.chunks[i], base.chunks[i]); shared != (i == 1 || i == 3) {
			t.Errorf("chunk %d shared = %v", i, shared)
		}
	}
	if l.Same(base) || !l.Same(l) || !(BackendList{}).Same(NewBackendList(nil)) {
		t.Error("same is wrong")
	}
	up, rm := diffBackends(base, l)
	if len(rm) != 0 || len(up) != 3 || up[0].Name != bs[3].Name || up[2].Name != bs[701].Name {
		t.Errorf("diffBackends = %d upserted, %v removed", len(up), rm)
	}
}

// TestDiffBackendsChunks: diffBackends gives the same result whether the
// lists share chunks or not, lengths and contents changing.
func TestDiffBackendsChunks(t *testing.T) {
	bs := namedBackends(1100)
	base := NewBackendList(bs)
	shared := base.Patched()
	changed := *bs[900]
	changed.Checksum = "changed"
	shared.Replace(900, &changed, base)
	// Longer: a Backend added at the end shares the full chunks.
	longer := NewBackendList(append(slices.Clone(bs), &Backend{Name: "c", Checksum: "c"}))
	longer.chunks = append(slices.Clone(base.chunks[:4]), longer.chunks[4:]...)
	fresh := NewBackendList(append(slices.Clone(bs[:10]), bs[11:]...))
	for name, tc := range map[string]struct {
		new      BackendList
		upserted []string
		removed  []string
	}{
		"patched": {shared, []string{"b-00900"}, nil},
		"longer":  {longer, []string{"c"}, nil},
		"fresh":   {fresh, nil, []string{"b-00010"}},
		"same":    {base, nil, nil},
	} {
		up, rm := diffBackends(base, tc.new)
		var names []string
		for _, b := range up {
			names = append(names, b.Name)
		}
		if !slices.Equal(names, tc.upserted) || !slices.Equal(rm, tc.removed) {
			t.Errorf("%s: upserted %v removed %v; want %v, %v", name, names, rm, tc.upserted, tc.removed)
		}
	}
}
