package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Error code sets: the custom-http-errors lists of routes other than the
// ConfigMap's. ingress-nginx writes one error_page line per listed code
// into each location, so a backend's answer with a code the route does
// not list passes unchanged, body included. nginx's proxy_intercept_errors
// and error_page take no variables, so nginx.conf holds, for each distinct
// list that a route intercepts, a copy of the intercepting proxy locations
// ("_e<set>": every protocol, buffering, request buffering and HTTP
// version of http and https, and grpc and grpcs) whose error_page lines
// name exactly those codes. The set's name is a hash of its codes; Lua
// gets the sets as error_sets (list "404,503" to name) and lua/proxy.lua
// picks the copy of the route's list. As with backend TLS profiles, a new
// list is a reload, a list no route uses any more stays until the next
// one, and a route whose list nginx.conf does not hold (beyond
// maxErrorSets, or through a backend TLS profile, whose locations have no
// copies) intercepts every 4xx and 5xx of its backend ("_i1").

// errorSetNameRe is the form of errorSet.Name.
var errorSetNameRe = regexp.MustCompile(`^e[0-9a-f]{12}$`)

// maxErrorSets bounds the copies nginx.conf holds (18 locations each).
const maxErrorSets = 64

// errorSet is one distinct list: its codes joined by commas, as
// lua/proxy.lua's compile_errors joins a route's, and its name.
type errorSet struct {
	Codes, Name string
}

// errorSetsOf returns the distinct code lists of the routes of servers
// that intercept their backend's errors with a list other than the
// ConfigMap's, sorted, at most maxErrorSets (the first ones in that order).
// The routes of an Ingress share their Errors: a list is built once for
// each.
func errorSetsOf(servers []config.Server) []errorSet {
	seen := map[string]bool{}
	var last *config.CustomErrors
	for i := range servers {
		for j := range servers[i].Locations {
			e := servers[i].Locations[j].Settings.Errors
			if e == nil || e == last {
				continue
			}
			last = e
			if key := interceptList(e); key != "" {
				seen[key] = true
			}
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) > maxErrorSets {
		keys = keys[:maxErrorSets]
	}
	out := make([]errorSet, len(keys))
	for i, k := range keys {
		sum := sha256.Sum256([]byte(k))
		out[i] = errorSet{Codes: k, Name: "e" + hex.EncodeToString(sum[:6])}
	}
	return out
}

// interceptList returns the codes of e joined by commas when the route
// intercepts its backend's errors with its own list, else "". A list with
// a code error_page cannot take (which Build never emits) makes no set:
// lua/proxy.lua refuses the route's host, and the other routes' sets
// still render.
func interceptList(e *config.CustomErrors) string {
	if e == nil || e.NoIntercept || e.Global || len(e.Codes) == 0 {
		return ""
	}
	var b strings.Builder
	for i, c := range e.Codes {
		if c < 400 || c > 599 || c == 499 {
			return ""
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(c))
	}
	return b.String()
}

// setErrorSets adds the locations of each set, copies of the "_i1"
// locations of location / 's proxies (not of the backend TLS profiles)
// with the set's error_page, after validating every code again, and the
// sets' Lua table.
func (v *view) setErrorSets(sets []errorSet) error {
	if len(sets) > maxErrorSets {
		return invalid("error code sets", strconv.Itoa(len(sets)))
	}
	base := slices.Clone(v.ProxyLocations)
	entries := make([]string, 0, len(sets))
	for _, s := range sets {
		codes, err := errorCodes(s.Codes)
		if err != nil || !errorSetNameRe.MatchString(s.Name) {
			return invalid("error code set", s.Codes)
		}
		for _, l := range base {
			prefix, ok := strings.CutSuffix(l.Name, "_i1")
			if !ok || !strings.HasPrefix(prefix, "@http") && !strings.HasPrefix(prefix, "@grpc") {
				continue
			}
			loc := proxyLocation{Name: prefix + "_" + s.Name, Lua: l.Lua}
			for _, d := range l.Directives {
				if strings.HasPrefix(d, "error_page ") {
					d = "error_page " + codes + " = @custom_error"
				}
				loc.Directives = append(loc.Directives, d)
			}
			v.ProxyLocations = append(v.ProxyLocations, loc)
		}
		entries = append(entries, "["+luaString(s.Codes)+"] = "+luaString(s.Name))
	}
	v.LuaErrorSets = "{" + strings.Join(entries, ", ") + "}"
	return nil
}

// hasErrorSets reports whether the running nginx.conf holds every error
// code set of sets: then they need no reload.
func (a *Applier) hasErrorSets(sets []errorSet) bool {
	for _, s := range sets {
		if !a.errorSets[s.Name] {
			return false
		}
	}
	return true
}

// errorSetNames returns the names of sets as a set.
func errorSetNames(sets []errorSet) map[string]bool {
	m := make(map[string]bool, len(sets))
	for _, s := range sets {
		m[s.Name] = true
	}
	return m
}
