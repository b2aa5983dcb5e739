package ingress

import (
	"errors"
	"fmt"

	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// isLimitAnnotation reports whether name is one of the limit annotations.
func isLimitAnnotation(name string) bool {
	switch name {
	case "limit-rps", "limit-rpm", "limit-burst-multiplier", "limit-connections",
		"limit-rate", "limit-rate-after", "limit-allowlist", "limit-whitelist":
		return true
	}
	return false
}

// applyLimit parses one limit annotation. Its values are digits or CIDRs,
// so it needs no checkForbidden. A value that cannot be parsed does not
// drop the limit: the Ingress's routes answer 503 (fail closed) and the
// Problem says so.
func applyLimit(a *intent.Settings, name, v string) {
	if err := setLimit(&a.Limit, name, v); err != nil {
		a.Limit.RateLimit.Invalid = true
		a.Problems = append(a.Problems, fmt.Sprintf("annotation %s%s=%s: %v; the Ingress's routes answer 503 (fail closed)",
			AnnotationPrefix, name, intent.Quote(v), err))
	}
	a.Limit.Any = true
}

func setLimit(l *intent.LimitSettings, name, v string) error {
	var err error
	r := &l.RateLimit
	switch name {
	case "limit-rps":
		r.RPS, err = parseLimitInt(v, intent.MaxLimitCount)
	case "limit-rpm":
		r.RPM, err = parseLimitInt(v, intent.MaxLimitCount)
	case "limit-connections":
		r.Connections, err = parseLimitInt(v, intent.MaxLimitCount)
	case "limit-burst-multiplier":
		r.BurstMultiplier, err = parseLimitInt(v, intent.MaxBurstMultiplier)
		l.BurstSet = true
	case "limit-rate":
		r.Rate, err = parseLimitKB(v)
		l.RateSet = true
	case "limit-rate-after":
		r.RateAfter, err = parseLimitKB(v)
		l.RateAfterSet = true
	case "limit-allowlist", "limit-whitelist":
		var cidrs []string
		cidrs, err = parseLimitAllowlist(v)
		// Sorted order reads limit-allowlist first: the newer name wins.
		if err == nil && (name == "limit-allowlist" || !l.AllowNewer) {
			r.Allowlist = cidrs
		}
		l.AllowNewer = l.AllowNewer || name == "limit-allowlist"
	}
	return err
}

// parseLimitInt parses a count of 0 to hi, as ingress-nginx's integer
// annotations (0 is no limit).
func parseLimitInt(v string, hi int) (int, error) { return intent.ParseIntRange(v, 0, hi) }

// parseLimitKB parses kilobytes (limit-rate, limit-rate-after) into bytes.
func parseLimitKB(v string) (int64, error) {
	n, err := parseLimitInt(v, intent.MaxLimitRateKB)
	return int64(n) * 1024, err
}

// parseLimitAllowlist parses comma-separated CIDRs or addresses; an empty
// list is refused (a present annotation must say what it exempts).
func parseLimitAllowlist(v string) ([]string, error) {
	r, err := parseSourceRange(v)
	if err == nil && len(r) == 0 {
		err = errors.New("no CIDR")
	}
	return r, err
}

// finishLimit sets the location's RateLimit when any limit annotation is
// present; one that limits nothing and is valid adds none.
func finishLimit(a *intent.Settings) {
	l := &a.Limit
	if !l.Any {
		return
	}
	r := l.RateLimit
	if !l.BurstSet {
		r.BurstMultiplier = intent.DefaultBurstMultiplier
	}
	if !r.Invalid && r.RPS == 0 && r.RPM == 0 && r.Connections == 0 && r.Rate == 0 {
		return
	}
	if r.RPS == 0 && r.RPM == 0 {
		r.BurstMultiplier = 0
	}
	a.Location.RateLimit = &r
}

// parseLimitStatus parses limit-req-status-code and limit-conn-status-code:
// 400 to 599 as nginx's limit_req_status; 503, the default, is kept as 0.
func parseLimitStatus(v string) (int, error) {
	n, err := intent.ParseIntRange(v, 400, 599)
	if n == intent.DefaultLimitStatusCode {
		n = 0
	}
	return n, err
}
