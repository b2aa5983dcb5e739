package intent

import (
	"errors"
	"fmt"
	"regexp/syntax"
)

// ValidateHeaderPattern checks canary-by-header-pattern: valid RE2 syntax,
// and within what nginx's PCRE takes with the same meaning, by the checks
// of regex paths (validateRegexPath, run on the pattern behind a "/": a
// literal first character changes nothing of what they look at).
func ValidateHeaderPattern(p string) error {
	if p == "" {
		return errors.New("must not be empty")
	}
	if _, err := syntax.Parse(p, syntax.Perl); err != nil {
		return fmt.Errorf("is not a valid regular expression: %w", err)
	}
	return ValidateRegexPath("/" + p)
}
