package ingress

import (
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// Source ranges (allow- and deny-lists of client addresses).
//
//   - allowlist-source-range, or its older name whitelist-source-range
//     (the newer name wins when both are set): only these clients are
//     served, others get 403. Without either, the ConfigMap's
//     whitelist-source-range is the route's allow-list.
//   - denylist-source-range: these clients get 403, before the allow-list
//     is consulted (as ingress-nginx's deny rules come before its allows).
//
// The address checked is nginx's $remote_addr: the client's own address
// unless the ConfigMap trusts proxies (proxy-real-ip-cidr) or enables the
// PROXY protocol, see pkg/nginx's real-IP settings.
//
// Fail closed: a list that cannot be applied (an entry that is not an
// address or CIDR, too many entries) leaves the route protected by
// nothing, so its routes answer 503 (SourceRangeInvalid) with a Problem,
// never the unprotected content.

// errFailClosed marks an annotation error after which the Ingress's routes
// answer 503 rather than being served without the annotation.
var errFailClosed = errors.New("the Ingress's routes answer 503 until it is fixed")

// problemOutcome is what a Problem about an annotation error says happens.
func problemOutcome(err error) string {
	if errors.Is(err, errFailClosed) {
		return ""
	}
	return "; ignored"
}

// isSourceRange reports whether name is a source range annotation.
func isSourceRange(name string) bool {
	return name == "whitelist-source-range" || name == "allowlist-source-range" || name == "denylist-source-range"
}

// allowListKey reports whether the ConfigMap key k has a parser that is
// an allow-list of its own (longer than maxValueLen, '$' and '\' in
// patterns), never written into nginx.conf as text.
func allowListKey(k string) bool {
	switch k {
	case "whitelist-source-range", "denylist-source-range", "block-user-agents", "block-referers":
		return true
	}
	return false
}

// maxSourceRangeLen bounds a list's length: 1000 IPv6 CIDRs and spaces.
const maxSourceRangeLen = 64 << 10

// setSourceRange parses an allow- or deny-list. allowlist-source-range, the
// newer name, wins over whitelist-source-range when both are set (sorted
// order parses allowlist- first, so a whitelist- value is then not even
// read).
func setSourceRange(a *intent.Settings, name, v string) error {
	if name == "whitelist-source-range" && (a.Location.AllowSourceRange != nil || a.AllowlistInvalid) {
		return nil
	}
	r, err := parseSourceRange(v)
	if err != nil {
		a.Location.SourceRangeInvalid = true
		if name == "allowlist-source-range" {
			a.AllowlistInvalid = true
		}
		return fmt.Errorf("%w (%w)", err, errFailClosed)
	}
	if name == "denylist-source-range" {
		a.Location.DenySourceRange = r
	} else {
		a.Location.AllowSourceRange = r
	}
	return nil
}

// parseSourceRange parses a comma-separated list of CIDRs and addresses
// into sorted, de-duplicated, masked prefixes ("10.0.0.1" is "10.0.0.1/32").
func parseSourceRange(v string) ([]string, error) {
	if len(v) > maxSourceRangeLen {
		return nil, fmt.Errorf("longer than %d characters", maxSourceRangeLen)
	}
	parts := strings.Split(v, ",")
	if len(parts) > intent.MaxSourceRanges {
		return nil, fmt.Errorf("more than %d entries", intent.MaxSourceRanges)
	}
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		pfx, err := parsePrefix(p)
		if err != nil {
			return nil, err
		}
		out = append(out, pfx.String())
	}
	sort.Strings(out)
	return intent.CompactStrings(out), nil
}

// parseCIDRList parses a ConfigMap list of CIDRs or addresses (commas or
// spaces between them) into the canonical form of parseSourceRange, joined
// by commas.
func parseCIDRList(v string) (string, error) {
	items, err := splitList(v, true)
	if err != nil {
		return "", err
	}
	r, err := parseSourceRange(strings.Join(items, ","))
	if err != nil {
		return "", err
	}
	return strings.Join(r, ","), nil
}

// parseSourceRangeDefault parses the ConfigMap's whitelist-source-range:
// up to maxSourceRanges entries, as the annotation.
func parseSourceRangeDefault(v string) (string, error) {
	r, err := parseSourceRange(v)
	if err != nil {
		return "", err
	}
	return strings.Join(r, ","), nil
}

func parsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not a CIDR", s)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%q is not an IP address or CIDR", s)
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// maxBlockEntryLen bounds one entry of a block list.
const maxBlockEntryLen = 1024

// parseBlockList parses block-user-agents or block-referers: entries
// separated by commas (as ingress-nginx splits them), spaces around them
// dropped; exact entries lower case. The canonical form joins them by
// newlines (which no entry has).
func parseBlockList(v string) (string, error) {
	var out []string
	for _, e := range strings.Split(v, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if len(out) == intent.MaxListItems {
			return "", fmt.Errorf("has more than %d items", intent.MaxListItems)
		}
		c, err := parseBlockEntry(e)
		if err != nil {
			return "", fmt.Errorf("%s: %w", intent.Quote(e), err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return "", errors.New("is empty")
	}
	return strings.Join(out, "\n"), nil
}

func parseBlockEntry(e string) (string, error) {
	if len(e) > maxBlockEntryLen {
		return "", fmt.Errorf("longer than %d characters", maxBlockEntryLen)
	}
	for i := 0; i < len(e); i++ {
		if e[i] < ' ' || e[i] > '~' {
			return "", errors.New("may only contain printable ASCII characters")
		}
	}
	pattern, ok := strings.CutPrefix(e, "~*")
	if !ok {
		pattern, ok = strings.CutPrefix(e, "~")
	}
	if !ok {
		return strings.ToLower(e), nil
	}
	if err := validateBlockRegex(pattern); err != nil {
		return "", err
	}
	return e, nil
}

// validateBlockRegex checks a block pattern as validateRegexPath checks a
// regex path, but for the leading slash (spaces are allowed).
func validateBlockRegex(p string) error {
	if p == "" {
		return errors.New("has an empty regular expression")
	}
	return intent.ValidatePattern(p)
}
