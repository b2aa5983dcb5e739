package config

import (
	"bytes"
	"encoding/json"
	"iter"
	"slices"
	"sort"
)

// backendChunk is the length of every chunk of a BackendList but the last.
const backendChunk = 256

// BackendList is the Backends of a Configuration, in order: a persistent
// list of chunks, so that an Incremental patch copies only the chunk index
// and the chunks it changes, and shares the others with the Configuration
// it patches. Every chunk is full but the last: the layout depends only on
// the length, so a patch and a Build of the same Backends are equal
// (reflect.DeepEqual). The zero value is the empty list. Like the
// Configuration that holds it, a BackendList is never modified once built.
type BackendList struct {
	chunks [][]*Backend
	n      int
}

// NewBackendList returns the list of bs, which it keeps: bs must not be
// modified afterwards.
func NewBackendList(bs []*Backend) BackendList {
	if len(bs) == 0 {
		return BackendList{}
	}
	chunks := make([][]*Backend, 0, (len(bs)+backendChunk-1)/backendChunk)
	for i := 0; i < len(bs); i += backendChunk {
		j := min(i+backendChunk, len(bs))
		chunks = append(chunks, bs[i:j:j])
	}
	return BackendList{chunks: chunks, n: len(bs)}
}

// Len returns the number of Backends.
func (l BackendList) Len() int { return l.n }

// At returns the Backend at i, which must be in [0, Len()).
func (l BackendList) At(i int) *Backend { return l.chunks[i/backendChunk][i%backendChunk] }

// All yields the index and Backend of each Backend in order.
func (l BackendList) All() iter.Seq2[int, *Backend] {
	return func(yield func(int, *Backend) bool) {
		i := 0
		for _, c := range l.chunks {
			for _, b := range c {
				if !yield(i, b) {
					return
				}
				i++
			}
		}
	}
}

// Slice returns the Backends in order, in a new slice (nil when empty).
func (l BackendList) Slice() []*Backend {
	if l.n == 0 {
		return nil
	}
	return slices.Concat(l.chunks...)
}

// Find returns the Backend named name and its index, by binary search:
// the list must be sorted by Name, as Build returns it.
func (l BackendList) Find(name string) (*Backend, int, bool) {
	i := sort.Search(l.n, func(i int) bool { return l.At(i).Name >= name })
	if i == l.n || l.At(i).Name != name {
		return nil, i, false
	}
	return l.At(i), i, true
}

// Same reports whether l and o are the Same list (Same chunk index).
func (l BackendList) Same(o BackendList) bool {
	return l.n == o.n && (l.n == 0 || &l.chunks[0] == &o.chunks[0])
}

// span returns the Backends in [i, j): a chunk's own slice when they are
// all in one, a new slice otherwise.
func (l BackendList) span(i, j int) []*Backend {
	if i == j {
		return nil
	}
	if c := i / backendChunk; c == (j-1)/backendChunk {
		return l.chunks[c][i%backendChunk : j-c*backendChunk]
	}
	out := make([]*Backend, 0, j-i)
	for k := i / backendChunk; k*backendChunk < j; k++ {
		lo, hi := max(i-k*backendChunk, 0), min(j-k*backendChunk, len(l.chunks[k]))
		out = append(out, l.chunks[k][lo:hi]...)
	}
	return out
}

// Patched returns a copy of l that shares its chunks but not its chunk
// index, for replace.
func (l BackendList) Patched() BackendList {
	return BackendList{chunks: slices.Clone(l.chunks), n: l.n}
}

// Replace puts b at i of l, a patched copy of base, first copying the
// chunk of i if l still shares it with base.
func (l *BackendList) Replace(i int, b *Backend, base BackendList) {
	c := i / backendChunk
	if sameArray(l.chunks[c], base.chunks[c]) {
		l.chunks[c] = slices.Clone(l.chunks[c])
	}
	l.chunks[c][i%backendChunk] = b
}

// MarshalJSON writes the list as an array of Backends ([] when empty), as
// a []*Backend is written. HTML characters are left for the caller's
// encoder to escape or not.
func (l BackendList) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	all := l.Slice()
	if all == nil {
		all = []*Backend{}
	}
	if err := enc.Encode(all); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (l *BackendList) UnmarshalJSON(b []byte) error {
	var bs []*Backend
	if err := json.Unmarshal(b, &bs); err != nil {
		return err
	}
	*l = NewBackendList(bs)
	return nil
}
