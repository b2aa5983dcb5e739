package gateway

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// Why a match condition is not served.
var (
	errMatchType = errors.New("match type is not known")
	errMatchName = errors.New("name is not a token")
)

// conditions returns what match m asks of a request besides its path:
// the method, headers (names ignoring case) and query parameters (names
// exactly), each Exact or RegularExpression; nil when nothing. Of two
// conditions on one name only the first counts, as the specification
// says. A value the data plane could not match as written leaves the
// match out.
func (t *route) conditions(where string, m *gatewayv1.HTTPRouteMatch) (*config.Match, bool) {
	if len(m.Headers) == 0 && len(m.QueryParams) == 0 && m.Method == nil {
		return nil, true
	}
	out := &config.Match{}
	if m.Method != nil {
		out.Method = strings.ToUpper(string(*m.Method))
		if !intent.ValidHeaderName(out.Method) {
			t.problem("%s: method %q is not valid; match left out", where, out.Method)
			return nil, false
		}
	}
	for _, h := range m.Headers {
		v, err := matchValue(strings.ToLower(string(h.Name)), h.Value, h.Type == nil || *h.Type == gatewayv1.HeaderMatchExact,
			h.Type != nil && *h.Type == gatewayv1.HeaderMatchRegularExpression)
		if err != nil {
			t.problem("%s: header %q: %v; match left out", where, h.Name, err)
			return nil, false
		}
		out.Headers = appendCondition(out.Headers, v)
	}
	for _, q := range m.QueryParams {
		v, err := matchValue(string(q.Name), q.Value, q.Type == nil || *q.Type == gatewayv1.QueryParamMatchExact,
			q.Type != nil && *q.Type == gatewayv1.QueryParamMatchRegularExpression)
		if err != nil {
			t.problem("%s: query parameter %q: %v; match left out", where, q.Name, err)
			return nil, false
		}
		out.Query = appendCondition(out.Query, v)
	}
	sortConditions(out.Headers)
	sortConditions(out.Query)
	return out, true
}

// matchValue validates one header or query parameter condition: a token
// name, a printable value, a regular expression that PCRE reads as RE2
// does.
func matchValue(name, value string, exact, regex bool) (config.MatchValue, error) {
	switch {
	case !exact && !regex:
		return config.MatchValue{}, errMatchType
	case !intent.ValidHeaderName(name):
		return config.MatchValue{}, errMatchName
	}
	if err := intent.CheckHeaderValue(value); err != nil {
		return config.MatchValue{}, err
	}
	if regex {
		if err := intent.ValidateHeaderPattern(value); err != nil {
			return config.MatchValue{}, fmt.Errorf("regular expression %w", err)
		}
	}
	return config.MatchValue{Name: name, Value: value, Regex: regex}, nil
}

// appendCondition appends v unless a condition on its name is there: the
// first one counts.
func appendCondition(list []config.MatchValue, v config.MatchValue) []config.MatchValue {
	if slices.ContainsFunc(list, func(x config.MatchValue) bool { return x.Name == v.Name }) {
		return list
	}
	return append(list, v)
}

// sortConditions puts conditions in their canonical order, by name.
func sortConditions(list []config.MatchValue) {
	slices.SortFunc(list, func(a, b config.MatchValue) int { return cmp.Compare(a.Name, b.Name) })
}
