package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/lua"
	"github.com/ingress-sync/ingress-sync/test/testkit/fieldwalk"
)

// What the Applier pushes of a config.Configuration is listed by hand too:
// deltaOf (dynamic.go) turns each field of a config.Change into pushes,
// HostOf (routes.go) converts each field of a Server for router.lua, and
// the stream block takes the listeners and endpoint files of the L4
// services and passthrough hosts (stream.go, streamfiles.go); on the Lua
// side, lua/configuration.lua keeps only the fields it knows of what is
// posted. The tests here change every field in turn, as pkg/model's
// TestChecksumAndDiffSeeEveryField does for the checksum and Diff, and
// look up every wire name in the Lua code.

// fieldOptions gives the fields whose values the conversions check valid
// values: a size converts to bytes, an endpoint that is not an IP address
// and a port is left out of the stream files.
func fieldOptions() *fieldwalk.Options {
	return &fieldwalk.Options{Values: map[reflect.Type]func(int) any{
		reflect.TypeFor[config.Size](): func(n int) any { return config.Size(fmt.Sprintf("%dk", n)) },
		reflect.TypeFor[config.Endpoint](): func(n int) any {
			return config.Endpoint{Address: fmt.Sprintf("10.0.%d.%d", n/256, n%256), Port: int32(1000 + n)}
		},
	}}
}

// hostJSON is the wire form of s, as the Applier posts it.
func hostJSON(t *testing.T, s *config.Server) string {
	t.Helper()
	b, err := json.Marshal(HostOf(s))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// shadowed are the Server fields whose change HostOf shows only when
// another field has a given value: the function sets it (on both Servers
// compared), and why.
func shadowed() map[string]struct {
	set func(*config.Server)
	why string
} {
	return map[string]struct {
		set func(*config.Server)
		why string
	}{
		"SSLRedirect": {func(s *config.Server) { s.Locations[0].Settings.SSLRedirect = nil },
			"it is the HTTPS redirect of the routes whose Location has no ssl-redirect of its own"},
		"Locations[0].Settings.SSLRedirect": {func(s *config.Server) { s.SSLRedirect = !*s.Locations[0].Settings.SSLRedirect },
			"nil takes the Server's ssl-redirect, here the other value"},
		"Locations[0].Settings.ModSecurity": {func(s *config.Server) {
			*s.Locations[0].Settings.ModSecurity = config.ModSecurity{Engine: "On", RemoveByID: []string{"1"}, RemoveByTag: []string{"a"},
				RequestBodyLimit: 1, RequestBodyAccess: "On", TransactionID: "$request_id"}
		}, "a value the validators refuse makes the route unavailable, whatever the others"},
		"Locations[0].Settings.UpstreamVhost": {func(s *config.Server) { s.Locations[0].Filters.RewriteHost = "" },
			"a Gateway API URLRewrite's hostname takes its place"},
	}
}

// TestHostOfSeesEveryField changes every field reachable from a Server in
// turn and fails, naming it, when the Host that HostOf makes of it (the
// route table entry pushed to Lua) stays the same; and fails for any field
// of that Host HostOf leaves unset.
func TestHostOfSeesEveryField(t *testing.T) {
	opts := fieldOptions()
	filled := func() *config.Server {
		var s config.Server
		fieldwalk.Fill(&s, opts)
		return &s
	}
	leaves := fieldwalk.Leaves(reflect.TypeFor[config.Server](), opts)
	if len(leaves) < 100 {
		t.Fatalf("only %d fields found", len(leaves))
	}
	sh := shadowed()
	for _, l := range leaves {
		if l.Change == nil {
			t.Errorf("%s: unexported, HostOf cannot convert it", l)
			continue
		}
		base, s := filled(), filled()
		why := ""
		for path, x := range sh {
			if l.Under(path) {
				x.set(base)
				x.set(s)
				why = " (" + x.why + ")"
			}
		}
		before := hostJSON(t, base)
		l.Change(s)
		if hostJSON(t, s) == before {
			t.Errorf("changing Server.%s leaves the Host unchanged%s", l, why)
		}
	}
	// Unavailable is the Applier's, for a host the data plane refused;
	// Digest is hostsOf's.
	if z := fieldwalk.Zero(HostOf(filled())); !slices.Equal(z, []string{"Unavailable", "Digest"}) {
		t.Errorf("HostOf leaves these Host fields unset: %s", strings.Join(z, ", "))
	}
}

// TestDeltaOfSeesEveryChangeField: each field of a config.Change, emptied
// or changed, changes the pushes deltaOf (dynamic.go) makes of it, but
// for those the Applier decides itself.
func TestDeltaOfSeesEveryChangeField(t *testing.T) {
	notPushed := map[string]string{
		"Reload":        "the Applier reloads when the nginx.conf it renders differs (renderIfChanged)",
		"ReloadReasons": "for the log and the caller",
	}
	opts := fieldOptions()
	filled := func() *config.Change {
		var ch config.Change
		fieldwalk.Fill(&ch, opts)
		return &ch
	}
	base := deltaOf(filled(), "sum")
	for _, l := range fieldwalk.Leaves(reflect.TypeFor[config.Change](), opts) {
		if strings.ContainsAny(l.Path, ".[") {
			continue // inside a Server, Backend or Certificate: see TestHostOfSeesEveryField
		}
		ch := filled()
		l.Change(ch)
		why, skip := notPushed[l.Path]
		switch changed := !reflect.DeepEqual(deltaOf(ch, "sum"), base); {
		case !changed && !skip:
			t.Errorf("changing Change.%s leaves the pushes unchanged", l)
		case changed && skip:
			t.Errorf("changing Change.%s changes the pushes, but notPushed says: %s", l, why)
		}
	}
}

// streamState is what the stream block serves of a Configuration.
type streamState struct {
	L4          []config.L4Service
	Passthrough []config.PassthroughHost
	Streams     []config.Stream
}

// streamEffect is what nginx sees of s: "listeners" (nginx.conf holds
// them: a change reloads) and "files" (the endpoint files lua/l4.js reads:
// rewritten without a reload), or "nothing".
func streamEffect(t *testing.T, a *Applier, base, s *streamState) string {
	t.Helper()
	files := func(s *streamState) map[string][]byte {
		f, err := a.streamFiles(&config.Configuration{L4: s.L4, Passthrough: s.Passthrough, Streams: s.Streams})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	var out []string
	if !slices.Equal(listenersOf(base.L4, base.Streams), listenersOf(s.L4, s.Streams)) {
		out = append(out, "listeners")
	}
	if !reflect.DeepEqual(files(base), files(s)) {
		out = append(out, "files")
	}
	if len(out) == 0 {
		return "nothing"
	}
	return strings.Join(out, ", ")
}

// TestStreamSeesEveryField changes every field of the L4 services and
// passthrough hosts in turn and fails, naming it, unless nginx sees the
// change where streamEffects says: in its listeners (a reload), in the
// endpoint files, or (with the reason) not at all.
func TestStreamSeesEveryField(t *testing.T) {
	opts := fieldOptions()
	filled := func() *streamState {
		var s streamState
		fieldwalk.Fill(&s, opts)
		for i := range s.Streams {
			s.Streams[i].Protocol = config.L4TLS // the one protocol whose files read Hostname
		}
		return &s
	}
	inspection := "names the Service of the endpoints for inspection (syncer inspect): nginx needs only the endpoints"
	effects := map[string]struct{ want, why string }{
		"L4":                               {"listeners, files", "nginx.conf listens on the protocol and port, which name the endpoint file"},
		"L4[0].DecodeProxy":                {"listeners", "the listener's proxy_protocol"},
		"L4[0].EncodeProxy":                {"listeners", "the listener's proxy_protocol on"},
		"L4[0].Endpoints":                  {"files", "lua/l4.js reads them from the file"},
		"L4[0].Namespace":                  {"nothing", inspection},
		"L4[0].Service":                    {"nothing", inspection},
		"L4[0].ServicePort":                {"nothing", inspection},
		"Passthrough":                      {"files", "lua/l4.js reads the hosts and their endpoints from passthrough.json"},
		"Passthrough[0].Ingress":           {"nothing", "for inspection"},
		"Passthrough[0].Backend":           {"nothing", "for inspection"},
		"Streams":                          {"listeners, files", "nginx.conf listens on the protocol and port, which name the file of its routes"},
		"Streams[0].Hostname":              {"files", "lua/l4.js picks the route of the SNI name from the file"},
		"Streams[0].Gateway":               {"nothing", "for Problems and inspection"},
		"Streams[0].Route":                 {"nothing", "for Problems and inspection"},
		"Streams[0].Backends":              {"files", "lua/l4.js reads the weights and endpoints from the file"},
		"Streams[0].Backends[0].Namespace": {"nothing", inspection},
		"Streams[0].Backends[0].Service":   {"nothing", inspection},
		"Streams[0].Backends[0].Port":      {"nothing", inspection},
	}
	a := &Applier{opts: Options{EnableSSLPassthrough: true}, log: slog.New(slog.DiscardHandler)}
	for _, l := range fieldwalk.Leaves(reflect.TypeFor[streamState](), opts) {
		best := ""
		for path := range effects {
			if l.Under(path) && len(path) > len(best) {
				best = path
			}
		}
		want, ok := effects[best]
		if !ok || l.Change == nil {
			t.Errorf("%s: no entry in effects", l)
			continue
		}
		s := filled()
		l.Change(s)
		if got := streamEffect(t, a, filled(), s); got != want.want {
			t.Errorf("changing %s: nginx sees %s, want %s (%s)", l, got, want.want, want.why)
		}
	}
}

// wireNames returns the JSON names of the fields of t (through pointers,
// slices and maps) by Go path from the type's name; with deep, those of
// the structs they hold too.
func wireNames(t reflect.Type, deep bool) map[string]string {
	out := map[string]string{}
	var walk func(t reflect.Type, path string, seen map[reflect.Type]bool)
	walk = func(t reflect.Type, path string, seen map[reflect.Type]bool) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			out[path+"."+f.Name] = cmp.Or(name, f.Name)
			if deep {
				walk(f.Type, path+"."+f.Name, seen)
			}
		}
	}
	walk(t, t.Name(), map[reflect.Type]bool{})
	return out
}

// luaCode returns the Lua modules by name, without their comments.
func luaCode(t *testing.T) map[string]string {
	t.Helper()
	comment := regexp.MustCompile(`(?m)(^|\s)--.*$`)
	out := map[string]string{}
	err := fs.WalkDir(lua.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".lua") {
			return err
		}
		b, err := fs.ReadFile(lua.Files, p)
		out[p] = comment.ReplaceAllString(string(b), "")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// namesField reports whether code names the wire name: as a field
// (item.name), a key (item["name"]) or, unless fieldsOnly, a string
// ("name").
func namesField(code, name string, fieldsOnly bool) bool {
	q := regexp.QuoteMeta(name)
	re := `\.` + q + `\b|\["` + q + `"\]`
	if !fieldsOnly {
		re += `|"` + q + `"`
	}
	return regexp.MustCompile(re).MatchString(code)
}

// TestLuaReadsEveryWireName looks up the wire names of what the Applier
// posts (Host, config.Backend, config.Certificate) in the Lua code, comments
// left out: lua/configuration.lua keeps only the fields of a host, a
// route, a backend and a certificate it names (ROUTE_FIELDS, HOST_FIELDS,
// normalize_backend...), so a field it does not name is dropped on
// arrival; and every name, down to the objects a route holds, must be read
// by some module. It is a textual check: a name used for something else
// passes too, but a new field that no Lua code names fails here.
func TestLuaReadsEveryWireName(t *testing.T) {
	code := luaCode(t)
	all := strings.Join(slices.Collect(maps.Values(code)), "\n")
	unread := map[string]string{
		"Host.ClientAuth.Secret": "the CA Secret's name, kept for inspection (GET /configuration/routes)",
	}
	kept := []reflect.Type{reflect.TypeFor[Host](), reflect.TypeFor[Route](), reflect.TypeFor[config.Backend](),
		reflect.TypeFor[config.Endpoint](), reflect.TypeFor[config.Affinity](), reflect.TypeFor[config.Certificate]()}
	for _, typ := range kept {
		for path, name := range wireNames(typ, false) {
			if !namesField(code["configuration.lua"], name, false) {
				t.Errorf("%s (%q): lua/configuration.lua does not name it, so drops it", path, name)
			}
		}
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[Host](), reflect.TypeFor[config.Backend](), reflect.TypeFor[config.Certificate]()} {
		for path, name := range wireNames(typ, true) {
			why, listed := unread[path]
			switch read := namesField(all, name, true); {
			case !read && !listed:
				t.Errorf("%s (%q): no Lua module reads it", path, name)
			case read && listed:
				t.Errorf("%s (%q): read by Lua, but listed as unread: %s", path, name, why)
			}
		}
	}
}
