package config

import (
	"cmp"
	"strings"
)

// Match holds the conditions besides its path that a request must meet
// to take a Location (a Gateway API HTTPRoute match): all of them. Several
// Locations may then share a host, path and path type, one per set of
// conditions: they are candidates for the path, in the order of the
// Server's Locations (see CompareMatches), the first whose conditions the
// request meets taking it; a request that meets none of a path's
// candidates goes on to the next path that matches it (a shorter prefix).
type Match struct {
	// Method is the request method, upper case; "" for any.
	Method string `json:"method,omitempty"`
	// Headers are matched by name ignoring case (Name is lower case),
	// sorted by Name; a request header sent more than once is matched on
	// its first value.
	Headers []MatchValue `json:"headers,omitempty"`
	// Query are the query parameters, matched by name exactly (case
	// included), sorted by Name; a parameter given more than once is
	// matched on its first value.
	Query []MatchValue `json:"query,omitempty"`
}

// MatchValue is one header or query parameter condition: the value equals
// Value, or, with Regex, Value (a regular expression in RE2 syntax that
// PCRE reads alike, see pkg/intent ValidatePattern) matches the whole
// value.
type MatchValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Regex bool   `json:"regex,omitempty"`
}

// Key is a canonical text of m, equal for equal conditions: what two
// candidates of one path conflict on. "" for nil.
func (m *Match) Key() string {
	if m == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(m.Method)
	for _, list := range [2][]MatchValue{m.Headers, m.Query} {
		b.WriteByte(0)
		for _, v := range list {
			b.WriteString(v.Name)
			b.WriteByte(1)
			if v.Regex {
				b.WriteByte('~')
			}
			b.WriteString(v.Value)
			b.WriteByte(1)
		}
	}
	return b.String()
}

// CompareMatches orders the candidates of one path as the Gateway API's
// precedence does: a method before none, then more header conditions
// first, then more query parameter conditions first; no conditions last.
// Equal ranks keep their order (the build's: oldest route first, then
// namespace/name, then rule order).
func CompareMatches(a, b *Match) int {
	ra, rb := a.rank(), b.rank()
	return cmp.Or(cmp.Compare(rb[0], ra[0]), cmp.Compare(rb[1], ra[1]), cmp.Compare(rb[2], ra[2]))
}

// rank is what CompareMatches compares, larger first: a method, the
// number of header conditions, the number of query conditions.
func (m *Match) rank() [3]int {
	if m == nil {
		return [3]int{}
	}
	method := 0
	if m.Method != "" {
		method = 1
	}
	return [3]int{method, len(m.Headers), len(m.Query)}
}
