package nginx

import (
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/config"
)

// Tests of the match conditions of routes (Gateway API header, query and
// method matches) through a real nginx: the candidates of one path in the
// order given, and the fall to shorter prefixes.

// withMatch returns l with match conditions m.
func withMatch(l config.Location, m config.Match) config.Location {
	l.Match = &m
	return l
}

func hdr(name, value string) config.MatchValue { return config.MatchValue{Name: name, Value: value} }

func hdrRegex(name, value string) config.MatchValue {
	return config.MatchValue{Name: name, Value: value, Regex: true}
}

func TestMatchPrecedence(t *testing.T) {
	cfg := configOf("match-1", []config.Server{
		// Locations in the order model.Build sorts them: longer paths
		// first, Exact before Prefix, candidates by config.CompareMatches.
		serverOf("m.test",
			withMatch(exactLoc("/x/exact", "b"), config.Match{Headers: []config.MatchValue{hdr("x-only", "1")}}),
			prefixLoc("/x/exact", "c"),
			prefixLoc("/long/path", "a"),
			withMatch(prefixLoc("/fall/deep", "a"), config.Match{Headers: []config.MatchValue{hdr("x-deep", "1")}}),
			exactLoc("/exact", "a"),
			withMatch(prefixLoc("/exact", "b"), config.Match{Headers: []config.MatchValue{hdr("x-a", "1")}}),
			withMatch(prefixLoc("/long", "b"), config.Match{Method: "GET", Headers: []config.MatchValue{hdr("x-a", "1")}}),
			withMatch(prefixLoc("/meth", "a"), config.Match{Method: "POST"}),
			withMatch(prefixLoc("/meth", "b"), config.Match{Headers: []config.MatchValue{hdr("x-a", "1"), hdr("x-b", "1")}}),
			withMatch(prefixLoc("/hdrs", "a"), config.Match{Headers: []config.MatchValue{hdr("x-a", "1"), hdr("x-b", "1")}}),
			withMatch(prefixLoc("/hdrs", "b"), config.Match{Headers: []config.MatchValue{hdr("x-a", "1")}}),
			withMatch(prefixLoc("/hvsq", "a"), config.Match{Headers: []config.MatchValue{hdr("x-a", "1")}}),
			withMatch(prefixLoc("/hvsq", "b"), config.Match{Query: []config.MatchValue{hdr("a", "1"), hdr("b", "1")}}),
			withMatch(prefixLoc("/qry", "a"), config.Match{Query: []config.MatchValue{hdr("a", "1"), hdr("b", "1")}}),
			withMatch(prefixLoc("/qry", "b"), config.Match{Query: []config.MatchValue{hdr("a", "1")}}),
			withMatch(prefixLoc("/tie", "a"), config.Match{Headers: []config.MatchValue{hdr("x-a", "1")}}),
			withMatch(prefixLoc("/tie", "b"), config.Match{Headers: []config.MatchValue{hdr("x-b", "1")}}),
			withMatch(prefixLoc("/re", "a"), config.Match{Headers: []config.MatchValue{hdrRegex("x-v", "v[0-9]+")}}),
			withMatch(prefixLoc("/re", "b"), config.Match{Query: []config.MatchValue{hdrRegex("animal", "wh.le")}}),
			withMatch(prefixLoc("/q", "a"), config.Match{Query: []config.MatchValue{hdr("animal", "whale")}}),
			prefixLoc("/fall", "c"),
			prefixLoc("/", "c"),
		),
		serverOf("n.test", withMatch(prefixLoc("/", "a"), config.Match{Headers: []config.MatchValue{hdr("x-a", "1")}})),
	}, echoBackends(t, "a", "b", "c")...)
	h := startNginx(t, cfg, nil)

	tests := []struct {
		name, method, url string
		header            []string
		status            int
		backend           string
	}{
		{"exact path beats a prefix with conditions", "GET", "http://m.test/exact", []string{"X-A", "1"}, 200, "a"},
		{"exact candidate not met falls to the prefix", "GET", "http://m.test/x/exact", nil, 200, "c"},
		{"exact candidate met", "GET", "http://m.test/x/exact", []string{"X-Only", "1"}, 200, "b"},
		{"longest prefix beats method and headers", "GET", "http://m.test/long/path/x", []string{"X-A", "1"}, 200, "a"},
		{"method beats more headers", "POST", "http://m.test/meth", []string{"X-A", "1", "X-B", "1"}, 200, "a"},
		{"other method takes the headers candidate", "GET", "http://m.test/meth", []string{"X-A", "1", "X-B", "1"}, 200, "b"},
		{"more headers beat fewer", "GET", "http://m.test/hdrs", []string{"X-A", "1", "X-B", "1"}, 200, "a"},
		{"fewer headers when the others are not met", "GET", "http://m.test/hdrs", []string{"X-A", "1"}, 200, "b"},
		{"headers beat query parameters", "GET", "http://m.test/hvsq?a=1&b=1", []string{"X-A", "1"}, 200, "a"},
		{"more query parameters beat fewer", "GET", "http://m.test/qry?a=1&b=1", nil, 200, "a"},
		{"fewer query parameters", "GET", "http://m.test/qry?a=1", nil, 200, "b"},
		{"order breaks ties", "GET", "http://m.test/tie", []string{"X-A", "1", "X-B", "1"}, 200, "a"},
		{"second of a tie", "GET", "http://m.test/tie", []string{"X-B", "1"}, 200, "b"},
		{"no candidate met falls to a shorter prefix", "GET", "http://m.test/fall/deep/x", nil, 200, "c"},
		{"deep candidate met", "GET", "http://m.test/fall/deep/x", []string{"X-Deep", "1"}, 200, "a"},
		{"no candidate met, nothing shorter: 404", "GET", "http://n.test/x", nil, 404, ""},
		{"header names ignore case", "GET", "http://n.test/x", []string{"x-A", "1"}, 200, "a"},
		{"header values do not ignore case", "GET", "http://m.test/tie", []string{"X-A", "1", "X-B", "x"}, 200, "a"},
		{"header regex matches the whole value", "GET", "http://m.test/re", []string{"X-V", "v12"}, 200, "a"},
		{"header regex does not match a part", "GET", "http://m.test/re", []string{"X-V", "v12x"}, 200, "c"},
		{"query regex", "GET", "http://m.test/re?animal=whole", nil, 200, "b"},
		{"query exact", "GET", "http://m.test/q?animal=whale&x=y", nil, 200, "a"},
		{"query names do not ignore case", "GET", "http://m.test/q?ANIMAL=whale", nil, 200, "c"},
		{"query values do not ignore case", "GET", "http://m.test/q?animal=Whale", nil, 200, "c"},
		{"a repeated query parameter is matched on its first value", "GET", "http://m.test/q?animal=whale&animal=dolphin", nil, 200, "a"},
		{"a repeated query parameter, first value not met", "GET", "http://m.test/q?animal=dolphin&animal=whale", nil, 200, "c"},
		{"query value is not a prefix match", "GET", "http://m.test/q?animal=whaledolphin", nil, 200, "c"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, reply := send(t, h, tc.method, tc.url, nil, tc.header...)
			if r.StatusCode != tc.status || reply.Backend != tc.backend {
				t.Errorf("%s %s %v = %d from %q, want %d from %q", tc.method, tc.url, tc.header, r.StatusCode, reply.Backend, tc.status, tc.backend)
			}
		})
	}
}
