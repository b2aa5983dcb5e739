package fieldwalk

import (
	"reflect"
	"slices"
	"testing"
)

type inner struct {
	S    string
	Tags []string
}

// list keeps its elements unexported, as a persistent list does.
type list struct{ items []*inner }

type root struct {
	B      bool
	I      int32
	U      uint16
	F      float64
	Bytes  []byte
	Ptr    *bool
	In     inner
	Ins    []inner
	M      map[string]inner
	Port   port
	L      list
	hidden int
}

// port is a number from 1 to 65535.
type port int

var opts = &Options{
	Values: map[reflect.Type]func(int) any{
		reflect.TypeFor[port](): func(n int) any { return port(1000 + n) },
	},
	Lists: map[reflect.Type]List{
		reflect.TypeFor[list](): {
			Elem: reflect.TypeFor[inner](),
			Of: func(s reflect.Value) reflect.Value {
				var l list
				for i := range s.Len() {
					v := s.Index(i).Interface().(inner)
					l.items = append(l.items, &v)
				}
				return reflect.ValueOf(l)
			},
			At: func(v reflect.Value, i int) reflect.Value {
				return reflect.ValueOf(v.Interface().(list).items[i]).Elem()
			},
		},
	},
}

func TestLeaves(t *testing.T) {
	var got []string
	for _, l := range Leaves(reflect.TypeFor[root](), opts) {
		got = append(got, l.String())
	}
	want := []string{"B", "I", "U", "F", "Bytes", "Ptr (nil)", "Ptr", "In.S", "In.Tags (empty)", "In.Tags[0]",
		"Ins (empty)", "Ins[0].S", "Ins[0].Tags (empty)", "Ins[0].Tags[0]",
		"M (empty)", "M[s9] (key)", "M[s9].S", "M[s9].Tags (empty)", "M[s9].Tags[0]", "Port",
		"L (empty)", "L[0].S", "L[0].Tags (empty)", "L[0].Tags[0]", "hidden (unexported)"}
	if !slices.Equal(got, want) {
		t.Errorf("leaves\n got %q\nwant %q", got, want)
	}
}

// TestChange: every leaf's Change makes a filled value differ from another
// one, and changes nothing but its field.
func TestChange(t *testing.T) {
	var a, b root
	Fill(&a, opts)
	Fill(&b, opts)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two fills differ")
	}
	if a.Port != 1012 || a.L.items[0].S != "s13" {
		t.Errorf("fill: port %d, list element %q", a.Port, a.L.items[0].S)
	}
	for _, l := range Leaves(reflect.TypeFor[root](), opts) {
		if l.Kind == Unexported {
			continue
		}
		var c root
		Fill(&c, opts)
		l.Change(&c)
		if reflect.DeepEqual(a, c) {
			t.Errorf("changing %s changes nothing", l)
		}
	}
}

func TestUnder(t *testing.T) {
	l := Leaf{Path: "A.B[0].C"}
	for path, want := range map[string]bool{"A": true, "A.B": true, "A.B[0]": true, "A.B[0].C": true, "A.Bx": false, "A.B[0].Cd": false} {
		if got := l.Under(path); got != want {
			t.Errorf("Under(%q) = %v, want %v", path, got, want)
		}
	}
	if !(Leaf{Path: "M[k] (key)"}).Under("M[k]") {
		t.Error("a map key is not under its entry")
	}
}

func TestZero(t *testing.T) {
	var r root
	Fill(&r, opts)
	if z := Zero(r); len(z) != 0 {
		t.Errorf("Zero of a filled value = %q", z)
	}
	r = root{Ptr: new(bool), Ins: []inner{{S: "a"}}, M: map[string]inner{"k": {}}}
	want := []string{"B", "I", "U", "F", "Bytes", "Ptr", "In.S", "In.Tags", "Ins[0].Tags",
		"M[k].S", "M[k].Tags", "Port"} // not L: its elements are unexported
	if z := Zero(r); !slices.Equal(z, want) {
		t.Errorf("Zero\n got %q\nwant %q", z, want)
	}
}
