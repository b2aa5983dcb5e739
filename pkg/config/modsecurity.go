package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ModSecurity is the web application firewall of a location: the
// enable-modsecurity, enable-owasp-core-rules, modsecurity-transaction-id
// and modsecurity-snippet annotations over the ConfigMap's
// enable-modsecurity, enable-owasp-modsecurity-crs and
// modsecurity-transaction-id. Every field is a validated value, never a
// text of the user: the data plane renders one rules file per distinct
// set of rule fields (Profile), from fixed text and these values.
type ModSecurity struct {
	// Engine is SecRuleEngine: "On", "DetectionOnly" or "Off".
	Engine string `json:"engine"`
	// CRS loads the OWASP Core Rule Set.
	CRS bool `json:"crs,omitempty"`
	// RemoveByID are SecRuleRemoveById's rule ids and ranges ("942100",
	// "941000-941999"), in the snippet's order.
	RemoveByID []string `json:"removeById,omitempty"`
	// RemoveByTag are SecRuleRemoveByTag's tags, in the snippet's order.
	RemoveByTag []string `json:"removeByTag,omitempty"`
	// RequestBodyLimit is SecRequestBodyLimit in bytes; 0: the default.
	RequestBodyLimit int64 `json:"requestBodyLimit,omitempty"`
	// RequestBodyAccess is SecRequestBodyAccess, "On" or "Off"; "": the
	// default (On).
	RequestBodyAccess string `json:"requestBodyAccess,omitempty"`
	// TransactionID is the nginx variable whose value names the
	// transaction ("$request_id"); "": the request's $request_id.
	TransactionID string `json:"transactionId,omitempty"`
	// Unavailable makes the location answer 503: its ModSecurity
	// annotations could not be applied (fail closed).
	Unavailable bool `json:"unavailable,omitempty"`
}

// The limits of a ModSecurity value.
const (
	// MaxModSecurityRemovals bounds the ids, ranges and tags a location
	// removes.
	MaxModSecurityRemovals = 64
	// MaxModSecurityBodyLimit is the largest SecRequestBodyLimit (1 GiB,
	// libmodsecurity's own ceiling).
	MaxModSecurityBodyLimit = 1 << 30
	// maxModSecurityRuleID is the largest rule id ModSecurity takes.
	maxModSecurityRuleID = 1<<31 - 1
)

// ErrModSecurity is the error of a ModSecurity value the validators refuse.
var ErrModSecurity = errors.New("invalid ModSecurity value")

var (
	modSecurityTagRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_./:-]{0,127}$`)
	modSecurityVarRe = regexp.MustCompile(`^\$[a-z][a-z0-9_]{0,63}$`)
)

// ParseModSecurityEngine parses a SecRuleEngine value (any case) into
// "On", "Off" or "DetectionOnly".
func ParseModSecurityEngine(v string) (string, error) {
	for _, e := range []string{"On", "Off", "DetectionOnly"} {
		if strings.EqualFold(v, e) {
			return e, nil
		}
	}
	return "", fmt.Errorf("%w: engine %q is not On, Off or DetectionOnly", ErrModSecurity, v)
}

// ParseModSecurityOnOff parses an On|Off value (any case), such as
// SecRequestBodyAccess's.
func ParseModSecurityOnOff(v string) (string, error) {
	for _, e := range []string{"On", "Off"} {
		if strings.EqualFold(v, e) {
			return e, nil
		}
	}
	return "", fmt.Errorf("%w: %q is not On or Off", ErrModSecurity, v)
}

// ParseModSecurityRuleID parses a rule id ("942100") or an inclusive
// range of ids ("941000-941999"), each 1 to 2147483647 without leading
// zeros.
func ParseModSecurityRuleID(v string) (string, error) {
	lo, hi, isRange := strings.Cut(v, "-")
	a, aerr := ruleID(lo)
	b, berr := a, error(nil)
	if isRange {
		b, berr = ruleID(hi)
	}
	if aerr != nil || berr != nil || a > b {
		return "", fmt.Errorf("%w: rule id %q is not an id or a range of ids", ErrModSecurity, v)
	}
	return v, nil
}

func ruleID(s string) (int64, error) {
	if s == "" || len(s) > 10 || s[0] == '0' {
		return 0, ErrModSecurity
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || n > maxModSecurityRuleID {
		return 0, ErrModSecurity
	}
	return n, nil
}

// ParseModSecurityTag parses a rule tag ("attack-xss",
// "OWASP_CRS/WEB_ATTACK/XSS", "paranoia-level/2"): letters, digits and
// _ . / : -, at most 128.
func ParseModSecurityTag(v string) (string, error) {
	if !modSecurityTagRe.MatchString(v) {
		return "", fmt.Errorf("%w: tag %q has characters other than letters, digits and _./:- or is longer than 128", ErrModSecurity, v)
	}
	return v, nil
}

// ParseModSecurityBodyLimit parses SecRequestBodyLimit: bytes, 1 to
// MaxModSecurityBodyLimit.
func ParseModSecurityBodyLimit(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 || n > MaxModSecurityBodyLimit || strconv.FormatInt(n, 10) != v {
		return 0, fmt.Errorf("%w: request body limit %q is not a number of bytes from 1 to %d", ErrModSecurity, v, MaxModSecurityBodyLimit)
	}
	return n, nil
}

// ParseModSecurityTransactionID parses modsecurity-transaction-id: one
// nginx variable ("$request_id"), whose value the data plane reads.
func ParseModSecurityTransactionID(v string) (string, error) {
	if !modSecurityVarRe.MatchString(v) {
		return "", fmt.Errorf("%w: transaction id %q is not one nginx variable such as $request_id", ErrModSecurity, v)
	}
	return v, nil
}

// Validate checks every field of m with the parsers above: what the data
// plane checks again before rendering a rules file.
func (m *ModSecurity) Validate() error {
	if e, err := ParseModSecurityEngine(m.Engine); err != nil || e != m.Engine {
		return fmt.Errorf("%w: engine %q", ErrModSecurity, m.Engine)
	}
	if len(m.RemoveByID)+len(m.RemoveByTag) > MaxModSecurityRemovals {
		return fmt.Errorf("%w: more than %d rules removed", ErrModSecurity, MaxModSecurityRemovals)
	}
	for _, id := range m.RemoveByID {
		if _, err := ParseModSecurityRuleID(id); err != nil {
			return err
		}
	}
	for _, t := range m.RemoveByTag {
		if _, err := ParseModSecurityTag(t); err != nil {
			return err
		}
	}
	if m.RequestBodyLimit < 0 || m.RequestBodyLimit > MaxModSecurityBodyLimit {
		return fmt.Errorf("%w: request body limit %d", ErrModSecurity, m.RequestBodyLimit)
	}
	if v, err := ParseModSecurityOnOff(m.RequestBodyAccess); m.RequestBodyAccess != "" && (err != nil || v != m.RequestBodyAccess) {
		return fmt.Errorf("%w: request body access %q", ErrModSecurity, m.RequestBodyAccess)
	}
	if m.TransactionID != "" {
		if _, err := ParseModSecurityTransactionID(m.TransactionID); err != nil {
			return err
		}
	}
	return nil
}

// Profile names the rules file of m: a hash of its rule fields (not the
// transaction id, which is the request's, nor Unavailable), so that
// locations with the same rules share one.
func (m *ModSecurity) Profile() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s|%t|%d|%s|", m.Engine, m.CRS, m.RequestBodyLimit, m.RequestBodyAccess)
	for _, list := range [][]string{m.RemoveByID, m.RemoveByTag} {
		fmt.Fprintf(h, "%d:", len(list))
		for _, s := range list {
			fmt.Fprintf(h, "%d:%s", len(s), s)
		}
	}
	return "m" + hex.EncodeToString(h.Sum(nil))[:16]
}

// ModSecurityProfileNameOK reports whether name has the form of Profile.
func ModSecurityProfileNameOK(name string) bool {
	return modSecurityProfileRe.MatchString(name)
}

var modSecurityProfileRe = regexp.MustCompile(`^m[0-9a-f]{16}$`)

// GlobalModSecurity holds the ConfigMap's ModSecurity keys, the defaults
// of every location (Build puts them into the routes: a change pushes
// routes, nginx.conf holds none of them).
type GlobalModSecurity struct {
	// Enable is enable-modsecurity.
	Enable bool `json:"enable,omitempty"`
	// CRS is enable-owasp-modsecurity-crs.
	CRS bool `json:"crs,omitempty"`
}

// modSecurity writes a location's ModSecurity for the checksum: nothing
// when nil, so that locations without one keep their encoding.
func (w *canonicalWriter) modSecurity(m *ModSecurity) {
	if m == nil {
		return
	}
	w.str("modSecurity")
	w.str(m.Engine)
	w.bool(m.CRS)
	w.strs(m.RemoveByID)
	w.strs(m.RemoveByTag)
	w.int(m.RequestBodyLimit)
	w.str(m.RequestBodyAccess)
	w.str(m.TransactionID)
	w.bool(m.Unavailable)
}

// globalModSecurity writes the ConfigMap's keys for the checksum: nothing
// while they are all unset.
func (w *canonicalWriter) globalModSecurity(g *GlobalModSecurity) {
	if *g == (GlobalModSecurity{}) {
		return
	}
	w.str("modSecurity")
	w.bool(g.Enable)
	w.bool(g.CRS)
}
