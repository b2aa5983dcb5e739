package lua

import (
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var (
	// requireLiteral matches a require of a literal module name, in any of
	// Lua's call forms: require("x"), require "x", require('x').
	requireLiteral = regexp.MustCompile(`\brequire\s*\(?\s*["']([^"']*)["']`)
	requireAny     = regexp.MustCompile(`\brequire\b`)
)

// moduleFiles returns the paths of every Lua module of Files.
func moduleFiles(t *testing.T) []string {
	t.Helper()
	files, err := fs.Glob(Files, "*.lua")
	if err != nil {
		t.Fatal(err)
	}
	sub, err := fs.Glob(Files, "balancer/*.lua")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, sub...)
	if len(files) < 10 {
		t.Fatalf("found only %d modules: %v", len(files), files)
	}
	return files
}

// moduleRequires returns every module of Files (by require name:
// "balancer.round_robin" for balancer/round_robin.lua) with the names it
// requires anywhere in its code, at load time or inside a function,
// comments left out. A require whose argument is not a literal name is an
// error: it would hide a dependency.
func moduleRequires(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, file := range moduleFiles(t) {
		data, err := fs.ReadFile(Files, file)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.ReplaceAll(strings.TrimSuffix(file, ".lua"), "/", ".")
		out[name] = []string{}
		for i, line := range strings.Split(string(data), "\n") {
			code, _, _ := strings.Cut(line, "--")
			found := requireLiteral.FindAllStringSubmatch(code, -1)
			if n := len(requireAny.FindAllString(code, -1)); n != len(found) {
				t.Errorf("%s:%d: require of a name that is not a literal string", file, i+1)
			}
			for _, m := range found {
				out[name] = append(out[name], m[1])
			}
		}
	}
	return out
}

// TestRequireGraphHasNoCycle fails when the modules of this directory
// require each other in a cycle, however deep in a function the require
// is: a lazy require hides the cycle from the load order, not from the
// design.
func TestRequireGraphHasNoCycle(t *testing.T) {
	for _, c := range requireCycles(moduleRequires(t)) {
		t.Errorf("require cycle: %s", strings.Join(c, " -> "))
	}
}

// requireCycles returns a cycle of graph (module -> required names) through
// each back edge a depth-first search meets, modules in name order; names
// that are not modules of graph (resty.core, cjson, ngx.*) are left out.
func requireCycles(graph map[string][]string) [][]string {
	const (
		unvisited = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var cycles [][]string
	var visit func(m string)
	visit = func(m string) {
		state[m] = onPath
		path = append(path, m)
		for _, dep := range graph[m] {
			if _, ours := graph[dep]; !ours {
				continue
			}
			switch state[dep] {
			case onPath:
				cycles = append(cycles, append(slices.Clone(path[slices.Index(path, dep):]), dep))
			case unvisited:
				visit(dep)
			}
		}
		path = path[:len(path)-1]
		state[m] = done
	}
	names := make([]string, 0, len(graph))
	for m := range graph {
		names = append(names, m)
	}
	slices.Sort(names)
	for _, m := range names {
		if state[m] == unvisited {
			visit(m)
		}
	}
	return cycles
}

func TestRequireCycles(t *testing.T) {
	for _, tc := range []struct {
		name  string
		graph map[string][]string
		want  [][]string
	}{
		{"none", map[string][]string{"a": {"b", "ngx.ssl"}, "b": {"c"}, "c": {}}, nil},
		{"diamond", map[string][]string{"a": {"b", "c"}, "b": {"d"}, "c": {"d"}, "d": {}}, nil},
		{"two modules", map[string][]string{"a": {"b"}, "b": {"a"}}, [][]string{{"a", "b", "a"}}},
		{"three modules", map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}},
			[][]string{{"a", "b", "c", "a"}}},
		{"itself", map[string][]string{"a": {"a"}}, [][]string{{"a", "a"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := requireCycles(tc.graph)
			if !slices.EqualFunc(got, tc.want, slices.Equal) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSettingsIsALeaf: settings.lua, which every module may require,
// requires nothing; phases.lua, the entry point of nginx.conf, is required
// by nothing.
func TestSettingsIsALeaf(t *testing.T) {
	graph := moduleRequires(t)
	if deps := graph["settings"]; len(deps) != 0 {
		t.Errorf("settings.lua requires %v; it must stay the leaf", deps)
	}
	for m, deps := range graph {
		if slices.Contains(deps, "phases") {
			t.Errorf("%s.lua requires phases, the entry point of nginx.conf", m)
		}
	}
}

func TestRequireLiteralMatches(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{`local a = require("a")`, []string{"a"}},
		{`local b = require "b.c"`, []string{"b.c"}},
		{`local x = require('x').y, require("z")`, []string{"x", "z"}},
		{`local name = "router"`, nil},
	} {
		var got []string
		for _, m := range requireLiteral.FindAllStringSubmatch(tc.line, -1) {
			got = append(got, m[1])
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %v, want %v", tc.line, got, tc.want)
		}
	}
}
