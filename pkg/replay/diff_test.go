package replay

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"reflect"
	"testing"
)

// TestSameServerSeesEveryField changes each field of a Server, of its
// Location and of the Location's settings in turn: config.ServerEqual must notice
// every one. A field added to the model without a comparison fails here.
func TestSameServerSeesEveryField(t *testing.T) {
	base := func() config.Server {
		return config.Server{Hostname: "a.example.com", Locations: []config.Location{{Path: "/", PathType: config.PathPrefix}}}
	}
	targets := []struct {
		name  string
		value func(*config.Server) reflect.Value
	}{
		{"Server", func(s *config.Server) reflect.Value { return reflect.ValueOf(s).Elem() }},
		{"Location", func(s *config.Server) reflect.Value { return reflect.ValueOf(&s.Locations[0]).Elem() }},
		{"LocationSettings", func(s *config.Server) reflect.Value { return reflect.ValueOf(&s.Locations[0].Settings).Elem() }},
	}
	for _, tg := range targets {
		typ := tg.value(&config.Server{Locations: []config.Location{{}}}).Type()
		for i := range typ.NumField() {
			f := typ.Field(i)
			a, b := base(), base()
			if !change(tg.value(&b).Field(i)) {
				continue // Locations itself: its elements are checked below
			}
			if config.ServerEqual(&a, &b) {
				t.Errorf("%s.%s changed, config.ServerEqual still says equal", tg.name, f.Name)
			}
		}
	}
	a, b := base(), base()
	if !config.ServerEqual(&a, &b) {
		t.Error("equal servers reported different")
	}
}

// change sets v to a value that differs from base's; it reports false for
// the Locations slice, whose fields are changed one by one instead.
func change(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		v.Set(p)
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.String {
			return false
		}
		v.Set(reflect.ValueOf([]string{"10.0.0.0/8"}))
	case reflect.Struct:
		return false // Settings: its fields are changed one by one
	default:
		panic("unhandled field kind " + v.Kind().String() + ": teach change and config.ServerEqual about it")
	}
	return true
}
