package model

import (
	"errors"
	"fmt"
)

// Limits of the rate and connection limit annotations.
const (
	// DefaultBurstMultiplier is ingress-nginx's limit-burst-multiplier.
	DefaultBurstMultiplier = 5
	// DefaultLimitStatusCode is the answer to a request beyond a limit
	// (limit-req-status-code, limit-conn-status-code).
	DefaultLimitStatusCode = 503
	maxLimitCount          = 1 << 20 // requests or connections
	maxBurstMultiplier     = 1000
	maxLimitRateKB         = 1 << 30 // limit-rate, limit-rate-after (KB)
)

// RateLimit is a route's rate and connection limits (limit-* annotations),
// counted per client address ($remote_addr) and Ingress in each nginx
// instance, as ingress-nginx's zones per Ingress and replica. See
// lua/limit.lua.
type RateLimit struct {
	// RPS and RPM are limit-rps and limit-rpm (0: none); each has a burst
	// of its rate times BurstMultiplier, without delay (nodelay). Both may
	// be set: a request must pass both.
	RPS             int `json:"rps,omitempty"`
	RPM             int `json:"rpm,omitempty"`
	BurstMultiplier int `json:"burstMultiplier,omitempty"`
	// Connections is limit-connections: requests in progress per client.
	Connections int `json:"connections,omitempty"`
	// Rate and RateAfter are limit-rate and limit-rate-after in bytes
	// (the annotations are in kilobytes): the response's transfer rate
	// to the client after its first RateAfter bytes.
	Rate      int64 `json:"rate,omitempty"`
	RateAfter int64 `json:"rateAfter,omitempty"`
	// Allowlist is limit-allowlist (or limit-whitelist): client CIDRs the
	// request and connection limits skip.
	Allowlist []string `json:"allowlist,omitempty"`
	// ReqStatus and ConnStatus answer requests beyond the request and
	// connection limits: the ConfigMap's limit-req-status-code and
	// limit-conn-status-code (0: 503).
	ReqStatus  int `json:"reqStatus,omitempty"`
	ConnStatus int `json:"connStatus,omitempty"`
	// Invalid: a limit annotation could not be parsed; the route answers
	// 503 (fail closed), never unlimited.
	Invalid bool `json:"invalid,omitempty"`
}

// limitInput collects the limit annotations of one Ingress (see
// finishLimit).
type limitInput struct {
	rl         RateLimit
	burstSet   bool
	allowNewer bool // limit-allowlist was read: it wins over limit-whitelist
	any        bool
	// rateSet and rateAfterSet: limit-rate and limit-rate-after are
	// present, so the ConfigMap's do not apply (even when they are 0).
	rateSet, rateAfterSet bool
}

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
func (a *ingressAnnotations) applyLimit(name, v string) {
	if err := a.limit.set(name, v); err != nil {
		a.limit.rl.Invalid = true
		a.problems = append(a.problems, fmt.Sprintf("annotation %s%s=%s: %v; the Ingress's routes answer 503 (fail closed)",
			AnnotationPrefix, name, quoteValue(v), err))
	}
	a.limit.any = true
}

func (l *limitInput) set(name, v string) error {
	var err error
	r := &l.rl
	switch name {
	case "limit-rps":
		r.RPS, err = parseLimitInt(v, maxLimitCount)
	case "limit-rpm":
		r.RPM, err = parseLimitInt(v, maxLimitCount)
	case "limit-connections":
		r.Connections, err = parseLimitInt(v, maxLimitCount)
	case "limit-burst-multiplier":
		r.BurstMultiplier, err = parseLimitInt(v, maxBurstMultiplier)
		l.burstSet = true
	case "limit-rate":
		r.Rate, err = parseLimitKB(v)
		l.rateSet = true
	case "limit-rate-after":
		r.RateAfter, err = parseLimitKB(v)
		l.rateAfterSet = true
	case "limit-allowlist", "limit-whitelist":
		var cidrs []string
		cidrs, err = parseLimitAllowlist(v)
		// Sorted order reads limit-allowlist first: the newer name wins.
		if err == nil && (name == "limit-allowlist" || !l.allowNewer) {
			r.Allowlist = cidrs
		}
		l.allowNewer = l.allowNewer || name == "limit-allowlist"
	}
	return err
}

// parseLimitInt parses a count of 0 to hi, as ingress-nginx's integer
// annotations (0 is no limit).
func parseLimitInt(v string, hi int) (int, error) { return parseIntRange(v, 0, hi) }

// parseLimitKB parses kilobytes (limit-rate, limit-rate-after) into bytes.
func parseLimitKB(v string) (int64, error) {
	n, err := parseLimitInt(v, maxLimitRateKB)
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
func (a *ingressAnnotations) finishLimit() {
	l := &a.limit
	if !l.any {
		return
	}
	r := l.rl
	if !l.burstSet {
		r.BurstMultiplier = DefaultBurstMultiplier
	}
	if !r.Invalid && r.RPS == 0 && r.RPM == 0 && r.Connections == 0 && r.Rate == 0 {
		return
	}
	if r.RPS == 0 && r.RPM == 0 {
		r.BurstMultiplier = 0
	}
	a.location.RateLimit = &r
}

// withGlobal returns r with the ConfigMap's status codes, and its
// limit-rate and limit-rate-after where l's annotations set none (as
// ingress-nginx's defaults of those annotations). It returns a copy: the
// Ingress's settings are shared by its locations and Builds.
func (r *RateLimit) withGlobal(l *limitInput, g *Global) *RateLimit {
	rate, after := !l.rateSet && g.LimitRate > 0, !l.rateAfterSet && g.LimitRateAfter > 0
	if r == nil && !rate {
		return nil
	}
	if r != nil && !rate && !after && r.ReqStatus == g.LimitReqStatusCode && r.ConnStatus == g.LimitConnStatusCode {
		return r
	}
	var c RateLimit
	if r != nil {
		c = *r
	}
	if rate {
		c.Rate = g.LimitRate
	}
	if after {
		c.RateAfter = g.LimitRateAfter
	}
	c.ReqStatus, c.ConnStatus = g.LimitReqStatusCode, g.LimitConnStatusCode
	return &c
}

// parseLimitStatus parses limit-req-status-code and limit-conn-status-code:
// 400 to 599 as nginx's limit_req_status; 503, the default, is kept as 0.
func parseLimitStatus(v string) (int, error) {
	n, err := parseIntRange(v, 400, 599)
	if n == DefaultLimitStatusCode {
		n = 0
	}
	return n, err
}

func (w *canonicalWriter) rateLimit(r *RateLimit) {
	w.bool(r != nil)
	if r == nil {
		return
	}
	for _, n := range []int64{int64(r.RPS), int64(r.RPM), int64(r.BurstMultiplier), int64(r.Connections),
		r.Rate, r.RateAfter, int64(r.ReqStatus), int64(r.ConnStatus)} {
		w.int(n)
	}
	w.strs(r.Allowlist)
	w.bool(r.Invalid)
}
