// Package fieldwalk lets a test change every field of a type in turn.
// Fill sets every field reachable from a value (through structs, pointers,
// slices, maps and the list types a test declares), each to a value of its
// own; Leaves lists those fields, each with its path and a function that
// changes it in a value Fill made; Zero lists the fields of a value that
// were left unset. Tests use it to check that a checksum, a comparison or
// a conversion sees every field: a field added later and forgotten by a
// hand-kept list fails a test that names it.
package fieldwalk

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Options adapts the walk to the types reflection cannot fill or change
// well on its own.
type Options struct {
	// Values gives the values of a type that counts as one field (a
	// validated size, an IP address): Fill uses seeds from 1 up,
	// Leaf.Change seed 0. Distinct seeds must give distinct values.
	Values map[reflect.Type]func(seed int) any
	// Lists are the types whose elements reflection cannot reach (they are
	// kept in unexported fields).
	Lists map[reflect.Type]List
}

// List describes a list type whose elements are in unexported fields.
type List struct {
	// Elem is the type of the elements.
	Elem reflect.Type
	// Of returns a list of the elements of s, a slice of Elem.
	Of func(s reflect.Value) reflect.Value
	// At returns element i of list v, addressable: setting it changes
	// the list.
	At func(v reflect.Value, i int) reflect.Value
}

// Kind says how a Leaf changes its field.
type Kind int

// The kinds of change.
const (
	// Value gives the field another value: a string gets "x" appended, a
	// bool flips, a number grows by one, a byte slice gets one byte more,
	// a map entry another key, a type of Options.Values its seed 0 value.
	Value Kind = iota
	// Nil sets a pointer to nil.
	Nil
	// Empty removes the elements of a slice, map or list.
	Empty
	// Unexported is an unexported field, which a Leaf cannot change:
	// Change is nil.
	Unexported
)

// Leaf is one field reachable from the root type.
type Leaf struct {
	// Path names the field from the root, as Go would reach it in a
	// value Fill made: "Servers[0].Locations[0].Settings.CORS"; a map
	// entry is [key], a map key "[key] (key)".
	Path string
	Kind Kind
	// Change changes the field in root, a pointer to a value Fill made.
	Change func(root any)
}

// String is the Path with the kind of change.
func (l Leaf) String() string {
	switch l.Kind {
	case Nil:
		return l.Path + " (nil)"
	case Empty:
		return l.Path + " (empty)"
	case Unexported:
		return l.Path + " (unexported)"
	}
	return l.Path
}

// Under reports whether the leaf is the field path or one inside it.
func (l Leaf) Under(path string) bool {
	rest, ok := strings.CutPrefix(l.Path, path)
	return ok && (rest == "" || rest[0] == '.' || rest[0] == '[' || rest[0] == ' ')
}

// Fill sets every field reachable from root, a pointer, each to a value
// of its own: strings "s<n>", numbers n, bools true, byte slices "b<n>",
// one element in every slice, map and list, every pointer allocated.
// Unexported fields keep their zero value. The values depend only on the
// type, so two calls give equal values.
func Fill(root any, o *Options) {
	f := filler{o: o}
	f.fill(reflect.ValueOf(root).Elem())
}

type filler struct {
	o *Options
	n int
}

func (f *filler) next() int {
	f.n++
	return f.n
}

func (f *filler) fill(v reflect.Value) {
	t := v.Type()
	if fn, ok := f.o.Values[t]; ok {
		v.Set(reflect.ValueOf(fn(f.next())))
		return
	}
	if l, ok := f.o.Lists[t]; ok {
		s := reflect.MakeSlice(reflect.SliceOf(l.Elem), 1, 1)
		f.fill(s.Index(0))
		v.Set(l.Of(s))
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				f.fill(v.Field(i))
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(t.Elem()))
		f.fill(v.Elem())
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			v.SetBytes(fmt.Appendf(nil, "b%d", f.next()))
			return
		}
		v.Set(reflect.MakeSlice(t, 1, 1))
		f.fill(v.Index(0))
	case reflect.Map:
		m := reflect.MakeMapWithSize(t, 1)
		k := reflect.New(t.Key()).Elem()
		f.fill(k)
		e := reflect.New(t.Elem()).Elem()
		f.fill(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	default:
		f.scalar(v)
	}
}

func (f *filler) scalar(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", f.next()))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(f.next()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(f.next()))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(f.next()))
	default:
		panic("fieldwalk: cannot fill a " + v.Type().String() + ": teach the package or add it to Options.Values")
	}
}

// Leaves returns the fields reachable from a value of type t (a struct
// type), in the order of their declaration, depth first: every scalar,
// every pointer (Nil), every slice, map and list (Empty), then what they
// hold.
func Leaves(t reflect.Type, o *Options) []Leaf {
	sample := reflect.New(t)
	Fill(sample.Interface(), o)
	w := walker{o: o}
	w.walk(sample.Elem(), "", func(root reflect.Value, f func(reflect.Value)) { f(root) })
	return w.leaves
}

// reach calls f with the field of a path in root.
type reach func(root reflect.Value, f func(reflect.Value))

type walker struct {
	o      *Options
	leaves []Leaf
}

func (w *walker) add(path string, k Kind, at reach, change func(reflect.Value)) {
	l := Leaf{Path: strings.TrimPrefix(path, "."), Kind: k}
	if change != nil {
		l.Change = func(root any) { at(reflect.ValueOf(root).Elem(), change) }
	}
	w.leaves = append(w.leaves, l)
}

// walk adds the leaves of v, the sample's field at path.
func (w *walker) walk(v reflect.Value, path string, at reach) {
	t := v.Type()
	if fn, ok := w.o.Values[t]; ok {
		w.add(path, Value, at, func(f reflect.Value) { f.Set(reflect.ValueOf(fn(0))) })
		return
	}
	if l, ok := w.o.Lists[t]; ok {
		w.add(path, Empty, at, setZero)
		w.walk(l.At(v, 0), path+"[0]", func(root reflect.Value, f func(reflect.Value)) {
			at(root, func(x reflect.Value) { f(l.At(x, 0)) })
		})
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		w.walkStruct(v, path, at)
	case reflect.Pointer:
		w.add(path, Nil, at, setZero)
		w.walk(v.Elem(), path, func(root reflect.Value, f func(reflect.Value)) {
			at(root, func(x reflect.Value) { f(x.Elem()) })
		})
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			w.add(path, Value, at, func(f reflect.Value) { f.SetBytes(append(slices.Clone(f.Bytes()), 'x')) })
			return
		}
		w.add(path, Empty, at, setZero)
		w.walk(v.Index(0), path+"[0]", func(root reflect.Value, f func(reflect.Value)) {
			at(root, func(x reflect.Value) { f(x.Index(0)) })
		})
	case reflect.Map:
		w.walkMap(v, path, at)
	default:
		w.add(path, Value, at, changeScalar)
	}
}

func (w *walker) walkStruct(v reflect.Value, path string, at reach) {
	t := v.Type()
	for i := range t.NumField() {
		p := path + "." + t.Field(i).Name
		if !t.Field(i).IsExported() {
			w.add(p, Unexported, at, nil)
			continue
		}
		w.walk(v.Field(i), p, func(root reflect.Value, f func(reflect.Value)) {
			at(root, func(x reflect.Value) { f(x.Field(i)) })
		})
	}
}

// walkMap adds a map's leaves: emptied, its key changed, and those of its
// value, changed on a copy that is then stored under the key.
func (w *walker) walkMap(v reflect.Value, path string, at reach) {
	w.add(path, Empty, at, setZero)
	k := v.MapKeys()[0]
	p := fmt.Sprintf("%s[%v]", path, k)
	w.add(p+" (key)", Value, at, func(m reflect.Value) {
		nk := reflect.New(k.Type()).Elem()
		nk.Set(k)
		changeScalar(nk)
		e := m.MapIndex(k)
		m.SetMapIndex(k, reflect.Value{})
		m.SetMapIndex(nk, e)
	})
	w.walk(v.MapIndex(k), p, func(root reflect.Value, f func(reflect.Value)) {
		at(root, func(m reflect.Value) {
			e := reflect.New(m.Type().Elem()).Elem()
			e.Set(m.MapIndex(k))
			f(e)
			m.SetMapIndex(k, e)
		})
	})
}

func setZero(v reflect.Value) { v.Set(reflect.Zero(v.Type())) }

func changeScalar(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(v.Float() + 1)
	default:
		panic("fieldwalk: cannot change a " + v.Type().String())
	}
}

// Zero returns the paths of the exported fields reachable from v that hold
// their zero value (a nil pointer, an empty slice or map, a zero scalar),
// as Leaves names them; unexported fields (so the elements of the lists
// of Options.Lists) are not looked at. A conversion
// of a value Fill made that leaves a field of its result unset shows here.
func Zero(v any) []string {
	var out []string
	zero(reflect.ValueOf(v), "", &out)
	return out
}

func zero(v reflect.Value, path string, out *[]string) {
	name := strings.TrimPrefix(path, ".")
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				zero(v.Field(i), path+"."+f.Name, out)
			}
		}
	case reflect.Pointer:
		if v.IsNil() {
			*out = append(*out, name)
			return
		}
		zero(v.Elem(), path, out)
	case reflect.Slice, reflect.Map:
		if v.Len() == 0 {
			*out = append(*out, name)
			return
		}
		if v.Kind() == reflect.Map {
			for _, k := range v.MapKeys() {
				zero(v.MapIndex(k), fmt.Sprintf("%s[%v]", path, k), out)
			}
			return
		}
		if v.Type().Elem().Kind() != reflect.Uint8 {
			for i := range v.Len() {
				zero(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
			}
		}
	default:
		if v.IsZero() {
			*out = append(*out, name)
		}
	}
}
