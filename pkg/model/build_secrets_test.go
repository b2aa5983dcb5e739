package model

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"

	"github.com/ingress-sync/ingress-sync/test/testkit/check"

	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// TestResolveRef drives the one lookup of the objects annotations name
// with a feature of its own: the Secret's (or ConfigMap's) key "value" is
// a number, -1 when the reference cannot be served. Each case resolves the
// reference of Ingress default/app twice, in one Build or, when the Store
// changes in between, in two (unless sameBuild).
func TestResolveRef(t *testing.T) {
	const ann = ingress.AnnotationPrefix + "test-secret"
	secret := func(ns, name string, kv ...string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: objMeta(ns, name), Data: map[string][]byte{}}
		for i := 0; i+1 < len(kv); i += 2 {
			s.Data[kv[i]] = []byte(kv[i+1])
		}
		return s
	}
	deleted := func(obj runtime.Object) events.Event {
		ev := upsertEvent(obj)
		ev.Op, ev.Object = events.OpDelete, nil
		return ev
	}
	tests := []struct {
		name string
		objs []runtime.Object
		// use changes the feature's use: a Secret "s" by default.
		use func(*refUse[int])
		// change, when set, is applied to the Store between the two
		// uses, each then in its own Build unless sameBuild; without, both
		// are in one Build.
		change    []events.Event
		sameBuild bool
		want      [2]int
		// problems are the reasons of the Problems of the Build of the
		// second use: one at most, as the first use's is reported once.
		problems []string
		// parses counts the calls of the feature's parse.
		parses int
	}{
		{
			name:   "found",
			objs:   []runtime.Object{secret("default", "s", "value", "7")},
			want:   [2]int{7, 7},
			parses: 1,
		},
		{
			name:   "namespace/name of the Ingress's namespace",
			objs:   []runtime.Object{secret("default", "s", "value", "7")},
			use:    func(u *refUse[int]) { u.ref = "default/s" },
			want:   [2]int{7, 7},
			parses: 1,
		},
		{
			name:     "missing Secret",
			want:     [2]int{-1, -1},
			problems: []string{"annotation " + ann + ": Secret default/s not found; the Ingress's routes answer 503"},
		},
		{
			name:     "wrong namespace reference",
			objs:     []runtime.Object{secret("other", "s", "value", "7")},
			use:      func(u *refUse[int]) { u.ref = "other/s" },
			want:     [2]int{-1, -1},
			problems: []string{"annotation " + ann + "=other/s: the Secret must be in the Ingress's namespace default; the Ingress's routes answer 503"},
		},
		{
			name:     "missing key",
			objs:     []runtime.Object{secret("default", "s", "other", "7")},
			want:     [2]int{-1, -1},
			problems: []string{"annotation " + ann + `: Secret default/s has no key "value"; the Ingress's routes answer 503`},
			parses:   1,
		},
		{
			name:     "malformed data",
			objs:     []runtime.Object{secret("default", "s", "value", "seven")},
			want:     [2]int{-1, -1},
			problems: []string{"annotation " + ann + `: Secret default/s: value is not a number; the Ingress's routes answer 503`},
			parses:   1,
		},
		{
			name:     "invalid annotations fail without a lookup",
			objs:     []runtime.Object{secret("default", "s", "value", "7")},
			use:      func(u *refUse[int]) { u.invalid = "annotation " + ann + "=s!: invalid" },
			want:     [2]int{-1, -1},
			problems: []string{"annotation " + ann + "=s!: invalid; the Ingress's routes answer 503"},
		},
		{
			name:     "a Secret is not a ConfigMap",
			objs:     []runtime.Object{secret("default", "s", "value", "7")},
			use:      func(u *refUse[int]) { u.kind = refConfigMap },
			want:     [2]int{-1, -1},
			problems: []string{"annotation " + ann + ": ConfigMap default/s not found; the Ingress's routes answer 503"},
		},
		{
			name:   "ConfigMap",
			objs:   []runtime.Object{fixtures.ConfigMap("default", "s", "value", "8")},
			use:    func(u *refUse[int]) { u.kind = refConfigMap },
			want:   [2]int{8, 8},
			parses: 1,
		},
		{
			name:   "optional reference not set",
			use:    func(u *refUse[int]) { u.ref, u.optional = "", true },
			want:   [2]int{0, 0},
			parses: 1,
		},
		{
			name:     "required reference not set",
			use:      func(u *refUse[int]) { u.ref = "" },
			want:     [2]int{-1, -1},
			problems: []string{"annotation " + ann + "=: the Secret must be in the Ingress's namespace default; the Ingress's routes answer 503"},
		},
		{
			name:      "cached second use within one Build",
			objs:      []runtime.Object{secret("default", "s", "value", "7")},
			change:    []events.Event{upsertEvent(secret("default", "s", "value", "9"))},
			sameBuild: true,
			want:      [2]int{7, 7},
			parses:    1,
		},
		{
			name:      "cached failure within one Build",
			change:    []events.Event{upsertEvent(secret("default", "s", "value", "9"))},
			sameBuild: true,
			want:      [2]int{-1, -1},
			problems:  []string{"annotation " + ann + ": Secret default/s not found; the Ingress's routes answer 503"},
		},
		{
			name:   "change between Builds",
			objs:   []runtime.Object{secret("default", "s", "value", "7")},
			change: []events.Event{upsertEvent(secret("default", "s", "value", "9"))},
			want:   [2]int{7, 9},
			parses: 2,
		},
		{
			name:     "change between Builds: deleted",
			objs:     []runtime.Object{secret("default", "s", "value", "7")},
			change:   []events.Event{deleted(secret("default", "s"))},
			want:     [2]int{7, -1},
			problems: []string{"annotation " + ann + ": Secret default/s not found; the Ingress's routes answer 503"},
			parses:   1,
		},
		{
			name:   "change between Builds: created",
			change: []events.Event{upsertEvent(secret("default", "s", "value", "7"))},
			want:   [2]int{-1, 7},
			parses: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t, append(tc.objs, newIngress("default", "app"))...)
			e := s.entries[entryKey{"Ingress", intent.Key{Namespace: "default", Name: "app"}}]
			parses := 0
			use := refUse[int]{
				objectRef: objectRef{refSecret, "test-secret", "s"},
				parse: func(_ *builder, _ *intent.Entry, o refObject) (int, string) {
					parses++
					var v string
					var has bool
					switch {
					case o.secret != nil:
						var b []byte
						b, has = o.secret.Data["value"]
						v = string(b)
					case o.configMap != nil:
						v, has = o.configMap.Data["value"]
					default:
						return 0, ""
					}
					if !has {
						return 0, o.reason(` has no key "value"`)
					}
					n, err := strconv.Atoi(v)
					if err != nil {
						return 0, o.reason(": value is not a number")
					}
					return n, ""
				},
				unavailable: func(*intent.Entry) int { return -1 },
			}
			if tc.use != nil {
				tc.use(&use)
			}
			b := newBuilder(s, testOptions(), 1)
			var got [2]int
			got[0] = resolveRef(b, e, use)
			if tc.change != nil {
				for _, ev := range tc.change {
					if _, err := s.Apply(ev); err != nil {
						t.Fatal(err)
					}
				}
				if !tc.sameBuild {
					b = newBuilder(s, testOptions(), 1)
				}
			}
			got[1] = resolveRef(b, e, use)
			check.Equal(t, "values", got, tc.want)
			want := []string{}
			for _, p := range tc.problems {
				want = append(want, "Ingress default/app: "+p)
			}
			check.Equal(t, "problems", problemStrings(b.problems), want)
			check.Equal(t, "parses", parses, tc.parses)
		})
	}
}

// TestRefKey: the key of a reference, and whether the lookup may read it.
func TestRefKey(t *testing.T) {
	for _, tc := range []struct {
		ref  string
		want intent.Key
		ok   bool
	}{
		{"s", intent.Key{Namespace: "ns", Name: "s"}, true},
		{"ns/s", intent.Key{Namespace: "ns", Name: "s"}, true},
		{"other/s", intent.Key{Namespace: "other", Name: "s"}, false},
		{"", intent.Key{Namespace: "ns", Name: ""}, false},
	} {
		k, ok := intent.RefKey("ns", tc.ref)
		if k != tc.want || ok != tc.ok {
			t.Errorf("refKey(ns, %q) = %v, %v; want %v, %v", tc.ref, k, ok, tc.want, tc.ok)
		}
	}
}
