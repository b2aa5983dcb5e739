package model

import (
	"reflect"
	"testing"
)

// fieldSetter changes one field reachable from a value: alloc makes the
// pointers and slice elements on its way exist, set then changes it.
type fieldSetter struct {
	name       string
	alloc, set func(reflect.Value)
}

// fieldSetters returns a setter for every field reachable from a value of
// type t through structs, pointers and the first element of slices.
func fieldSetters(t reflect.Type, name string) []fieldSetter {
	noop := func(reflect.Value) {}
	switch t.Kind() {
	case reflect.Struct:
		return structSetters(t, name)
	case reflect.Pointer:
		ensure := func(v reflect.Value) {
			if v.IsNil() {
				v.Set(reflect.New(t.Elem()))
			}
		}
		out := []fieldSetter{{name + " (nil or not)", noop, func(v reflect.Value) {
			if v.IsNil() {
				v.Set(reflect.New(t.Elem()))
			} else {
				v.Set(reflect.Zero(t))
			}
		}}}
		for _, s := range fieldSetters(t.Elem(), name) {
			out = append(out, fieldSetter{s.name,
				func(v reflect.Value) { ensure(v); s.alloc(v.Elem()) },
				func(v reflect.Value) { ensure(v); s.set(v.Elem()) }})
		}
		return out
	case reflect.Slice:
		ensure := func(v reflect.Value) {
			if v.Len() == 0 {
				v.Set(reflect.Append(v, reflect.Zero(t.Elem())))
			}
		}
		out := []fieldSetter{{name + " (length)", noop, func(v reflect.Value) {
			v.Set(reflect.Append(v, reflect.Zero(t.Elem())))
		}}}
		for _, s := range fieldSetters(t.Elem(), name+"[0]") {
			out = append(out, fieldSetter{s.name,
				func(v reflect.Value) { ensure(v); s.alloc(v.Index(0)) },
				func(v reflect.Value) { ensure(v); s.set(v.Index(0)) }})
		}
		return out
	case reflect.String:
		return []fieldSetter{{name, noop, func(v reflect.Value) { v.SetString(v.String() + "x") }}}
	case reflect.Bool:
		return []fieldSetter{{name, noop, func(v reflect.Value) { v.SetBool(!v.Bool()) }}}
	case reflect.Int, reflect.Int32, reflect.Int64:
		return []fieldSetter{{name, noop, func(v reflect.Value) { v.SetInt(v.Int() + 1) }}}
	}
	panic("fieldSetters: unhandled kind " + t.Kind().String() + " at " + name)
}

func structSetters(t reflect.Type, name string) []fieldSetter {
	var out []fieldSetter
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		for _, s := range fieldSetters(f.Type, name+"."+f.Name) {
			out = append(out, fieldSetter{s.name,
				func(v reflect.Value) { s.alloc(v.Field(i)) },
				func(v reflect.Value) { s.set(v.Field(i)) }})
		}
	}
	return out
}

// serverSum is the checksum of a Configuration holding only s.
func serverSum(s *Server) string {
	return (&Configuration{Servers: []Server{*s}}).ComputeChecksum()
}

// TestServerChecksumSeesEveryField changes every field of a Server, its
// Locations and their settings, one at a time, and checks that the
// Configuration checksum and ServerEqual (Diff) see it: a new field that is
// not encoded fails here.
func TestServerChecksumSeesEveryField(t *testing.T) {
	setters := fieldSetters(reflect.TypeFor[Server](), "Server")
	if len(setters) < 40 {
		t.Fatalf("only %d fields found", len(setters))
	}
	for _, s := range setters {
		var srv, same Server
		v := reflect.ValueOf(&srv).Elem()
		s.alloc(v)
		s.alloc(reflect.ValueOf(&same).Elem())
		before := serverSum(&srv)
		if !ServerEqual(&srv, &same) {
			t.Fatalf("%s: ServerEqual is false for equal servers", s.name)
		}
		s.set(v)
		if serverSum(&srv) == before {
			t.Errorf("changing %s leaves the Configuration checksum unchanged", s.name)
		}
		if ServerEqual(&srv, &same) {
			t.Errorf("changing %s leaves the Server equal", s.name)
		}
	}
}
