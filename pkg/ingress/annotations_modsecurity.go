package ingress

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// ModSecurity: enable-modsecurity, enable-owasp-core-rules,
// modsecurity-transaction-id and modsecurity-snippet. The snippet is not
// raw configuration here: parseModSecuritySnippet reads it as a list of
// directives and accepts only an allow-list, each value validated by the
// parsers of pkg/config, into config.ModSecurity fields; the data plane
// renders its rules file from those values, never from the text. Anything
// else in the snippet (SecRule, Include, SecAuditLog, ...) is refused with
// a Problem naming it, and the Ingress's routes that run ModSecurity answer
// 503 rather than run without the rules the snippet meant to add.

// maxModSecuritySnippet bounds the snippet's length.
const maxModSecuritySnippet = 16 << 10

// errModSecurityDirective is the error of a snippet directive outside the
// allow-list.
var errModSecurityDirective = errors.New("is not one of SecRuleEngine, SecRuleRemoveById, SecRuleRemoveByTag, SecRequestBodyLimit, SecRequestBodyAccess")

func parseModSecurityAnnotation(a *intent.Settings, _ *parseState, name, v string) error {
	if a.ModSecurity == nil {
		a.ModSecurity = &intent.ModSecurityInput{}
	}
	m := a.ModSecurity
	var err error
	switch name {
	case "enable-modsecurity":
		var b *bool
		if b, err = parseBoolPtr(v); err == nil {
			m.Enable = b
		}
	case "enable-owasp-core-rules":
		m.CRS, err = parseBool(v)
	case "modsecurity-transaction-id":
		m.TransactionID, err = config.ParseModSecurityTransactionID(v)
	case "modsecurity-snippet":
		var s config.ModSecurity
		if s, err = parseModSecuritySnippet(v); err == nil {
			m.Snippet = s
		}
	default:
		return errUnsupported
	}
	if err != nil && name != "enable-owasp-core-rules" {
		m.Invalid = true
		return fmt.Errorf("%w (%w)", err, errModSecurityClosed)
	}
	return err
}

// errModSecurityClosed marks a ModSecurity annotation error: the routes
// that run ModSecurity answer 503 until it is fixed (it is errFailClosed
// for problemOutcome, with its own wording).
var errModSecurityClosed error = closedError("the Ingress's routes that run ModSecurity answer 503 until it is fixed")

type closedError string

func (e closedError) Error() string        { return string(e) }
func (e closedError) Is(target error) bool { return target == errFailClosed }

// parseModSecuritySnippet parses a modsecurity-snippet: one directive a
// line, blank lines and "#" comments skipped, a directive's arguments
// separated by spaces or tabs (SecRuleRemoveByTag's may be in double
// quotes). Each directive of the allow-list may appear once but
// SecRuleRemoveById and SecRuleRemoveByTag, whose lists add up (at most
// config.MaxModSecurityRemovals entries).
func parseModSecuritySnippet(v string) (config.ModSecurity, error) {
	var m config.ModSecurity
	if len(v) > maxModSecuritySnippet {
		return m, fmt.Errorf("longer than %d bytes", maxModSecuritySnippet)
	}
	seen := map[string]bool{}
	for i, line := range strings.Split(v, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		d, args := fields[0], fields[1:]
		if seen[d] && d != "SecRuleRemoveById" && d != "SecRuleRemoveByTag" {
			return m, fmt.Errorf("line %d: %s appears twice", i+1, intent.Quote(d))
		}
		seen[d] = true
		if err := applyModSecurityDirective(&m, d, args); err != nil {
			return m, fmt.Errorf("line %d: %s %w", i+1, intent.Quote(d), err)
		}
	}
	if len(m.RemoveByID)+len(m.RemoveByTag) > config.MaxModSecurityRemovals {
		return m, fmt.Errorf("removes more than %d rules and tags", config.MaxModSecurityRemovals)
	}
	return m, nil
}

// applyModSecurityDirective applies one directive of the allow-list.
func applyModSecurityDirective(m *config.ModSecurity, d string, args []string) error {
	one := func() (string, error) {
		if len(args) != 1 {
			return "", fmt.Errorf("takes one argument, not %d", len(args))
		}
		return args[0], nil
	}
	var err error
	var a string
	switch d {
	case "SecRuleEngine":
		if a, err = one(); err == nil {
			m.Engine, err = config.ParseModSecurityEngine(a)
		}
	case "SecRequestBodyAccess":
		if a, err = one(); err == nil {
			m.RequestBodyAccess, err = config.ParseModSecurityOnOff(a)
		}
	case "SecRequestBodyLimit":
		if a, err = one(); err == nil {
			m.RequestBodyLimit, err = config.ParseModSecurityBodyLimit(a)
		}
	case "SecRuleRemoveById":
		err = appendModSecurity(&m.RemoveByID, args, config.ParseModSecurityRuleID)
	case "SecRuleRemoveByTag":
		if a, err = one(); err == nil {
			err = appendModSecurity(&m.RemoveByTag, []string{unquote(a)}, config.ParseModSecurityTag)
		}
	default:
		return errModSecurityDirective
	}
	return err
}

// appendModSecurity validates each of args with parse and appends it.
func appendModSecurity(list *[]string, args []string, parse func(string) (string, error)) error {
	if len(args) == 0 {
		return errors.New("takes at least one argument")
	}
	for _, a := range args {
		v, err := parse(a)
		if err != nil {
			return err
		}
		if len(*list) == config.MaxModSecurityRemovals {
			return fmt.Errorf("lists more than %d entries", config.MaxModSecurityRemovals)
		}
		*list = append(*list, v)
	}
	return nil
}

// unquote removes one pair of surrounding double quotes.
func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}
