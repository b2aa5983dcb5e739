package ingress

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
	networkingv1 "k8s.io/api/networking/v1"
)

// applyCanary parses one canary* annotation into a.canary. Only
// canary-by-header-pattern may carry '$' and '\' (see
// validateHeaderPattern); the others go through checkForbidden.
func applyCanary(a *intent.Settings, name, v string) error {
	if a.Canary == nil {
		a.Canary = &intent.CanarySettings{Spec: config.Canary{WeightTotal: intent.DefaultCanaryWeightTotal}}
	}
	c := &a.Canary.Spec
	var err error
	if name == "canary-by-header-pattern" {
		p := strings.TrimSpace(v)
		if err = intent.ValidateHeaderPattern(p); err == nil {
			c.HeaderPattern = p
		}
		return noteCanary(a.Canary, name, err)
	}
	if err = checkForbidden(v, false); err != nil {
		return err
	}
	switch name {
	case "canary":
		a.Canary.Enabled, err = strconv.ParseBool(v)
		if err != nil {
			return errors.New("must be true or false")
		}
		return nil
	case "canary-weight":
		c.Weight, err = intent.ParseIntRange(v, 0, intent.MaxCanaryWeight)
	case "canary-weight-total":
		c.WeightTotal, err = parseCanaryWeightTotal(v)
	case "canary-by-header":
		c.Header, err = parseHeaderName(strings.TrimSpace(v))
	case "canary-by-header-value":
		c.HeaderValue, err = parseHeaderValue(strings.TrimSpace(v))
	case "canary-by-cookie":
		c.Cookie, err = parseCookieName(strings.TrimSpace(v))
	default:
		return errUnsupported
	}
	return noteCanary(a.Canary, name, err)
}

// note records that name was accepted, and returns err.
func noteCanary(c *intent.CanarySettings, name string, err error) error {
	if err == nil {
		c.Set = append(c.Set, AnnotationPrefix+name)
	}
	return err
}

// finishCanary combines the canary annotations once all are parsed: they
// mean nothing without canary=true (the Ingress is then a main one, as in
// ingress-nginx), nor a header value or pattern without a header, nor a
// pattern beside a value.
func finishCanary(a *intent.Settings) {
	in := a.Canary
	if in == nil {
		return
	}
	if !in.Enabled {
		a.Canary = nil
		if len(in.Set) > 0 {
			what := "annotation "
			if len(in.Set) > 1 {
				what = "annotations "
			}
			a.Problems = append(a.Problems, fmt.Sprintf("%s%s: %scanary is not \"true\"; ignored, the Ingress is not a canary",
				what, strings.Join(in.Set, ", "), AnnotationPrefix))
		}
		return
	}
	c := &in.Spec
	if c.Header == "" && (c.HeaderValue != "" || c.HeaderPattern != "") {
		a.Problems = append(a.Problems, fmt.Sprintf("annotations %scanary-by-header-value and -pattern mean nothing without %scanary-by-header; ignored",
			AnnotationPrefix, AnnotationPrefix))
		c.HeaderValue, c.HeaderPattern = "", ""
	}
	if c.HeaderValue != "" && c.HeaderPattern != "" {
		a.Problems = append(a.Problems, fmt.Sprintf("annotation %scanary-by-header-pattern: ignored, %scanary-by-header-value is set and wins",
			AnnotationPrefix, AnnotationPrefix))
		c.HeaderPattern = ""
	}
	c.Weight = min(c.Weight, c.WeightTotal)
}

// parseCanaryWeightTotal accepts a whole number from 100 up: ingress-nginx's
// router takes a smaller total as 100, so one is refused (and 100 used).
func parseCanaryWeightTotal(v string) (int, error) {
	n, err := intent.ParseIntRange(v, 0, intent.MaxCanaryWeight)
	if err != nil {
		return intent.DefaultCanaryWeightTotal, err
	}
	if n < intent.DefaultCanaryWeightTotal {
		return intent.DefaultCanaryWeightTotal, errors.New("below 100, which ingress-nginx takes as 100 (100 is used)")
	}
	return n, nil
}

// parseHeaderName accepts a request header name of letters, digits, '-'
// and '_' (nginx drops headers with other characters), at most 256.
func parseHeaderName(v string) (string, error) {
	if v == "" || len(v) > intent.MaxCanaryHeaderLen {
		return "", fmt.Errorf("must be 1 to %d characters", intent.MaxCanaryHeaderLen)
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !intent.IsAlnum(c) && c != '-' && c != '_' {
			return "", errors.New("may only contain letters, digits, '-' and '_'")
		}
	}
	return v, nil
}

// parseHeaderValue accepts a non-empty value (checkForbidden has run).
func parseHeaderValue(v string) (string, error) {
	if v == "" {
		return "", errors.New("must not be empty")
	}
	return v, nil
}

// canaryKeeps reports whether an annotation applies on a canary Ingress:
// the canary ones, and those of its backend.
func canaryKeeps(name string) bool {
	return strings.HasPrefix(name, "canary") || strings.HasPrefix(name, "affinity") ||
		strings.HasPrefix(name, "session-cookie-") || strings.HasPrefix(name, "upstream-hash-by") || name == "load-balance"
}

// canaryNotes says what of canary Ingress ing does not apply: its TLS and
// the annotations of its paths (the main Ingress's apply).
func canaryNotes(ing *networkingv1.Ingress) []string {
	var out []string
	if len(ing.Spec.TLS) > 0 {
		out = append(out, "spec.tls: ignored on a canary Ingress (TLS is the main Ingress's)")
	}
	var ignored []string
	for k := range ing.Annotations {
		if name, ok := strings.CutPrefix(k, AnnotationPrefix); ok && !canaryKeeps(name) && !strings.HasSuffix(name, "-snippet") {
			ignored = append(ignored, k)
		}
	}
	if len(ignored) > 0 {
		slices.Sort(ignored)
		out = append(out, fmt.Sprintf("annotations %s: ignored on a canary Ingress, whose paths take the main Ingress's settings (only load-balance, upstream-hash-by and affinity apply, to its backend)",
			strings.Join(ignored, ", ")))
	}
	return out
}
