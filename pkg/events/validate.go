package events

import (
	"fmt"
	"strings"
)

// Validate checks that ev can be encoded and published: a known op and kind,
// a name, a namespace and name that make valid subject tokens, and an object
// that is either absent (allowed on deletes only) or of the kind's Go type
// with the envelope's namespace and name. Errors wrap ErrInvalidEvent.
func (e Event) Validate() error {
	if err := e.validateIdentity(); err != nil {
		return fmt.Errorf("%w: %s %s: %s", ErrInvalidEvent, e.Kind, e.Key(), err)
	}
	return nil
}

func (e Event) validateIdentity() error {
	if !e.Op.Valid() {
		return fmt.Errorf("unknown op %q", e.Op)
	}
	if KindToken(e.Kind) == "" {
		return fmt.Errorf("unknown kind %q", e.Kind)
	}
	if !validName(e.Name) {
		return fmt.Errorf("name %q cannot be a subject token", e.Name)
	}
	if e.Namespace != "" && !validName(e.Namespace) {
		return fmt.Errorf("namespace %q cannot be a subject token", e.Namespace)
	}
	if isNil(e.Object) {
		if e.Op != OpDelete {
			return fmt.Errorf("%s without an object", e.Op)
		}
		return nil
	}
	return checkObject(e.Kind, e.Namespace, e.Name, e.Object)
}

// validName reports whether a namespace or name encodes to a valid subject
// token and decodes back to itself: '_' stands for '.' in subjects, so it
// may not appear (Kubernetes names never contain it).
func validName(s string) bool {
	return !strings.Contains(s, "_") && validToken(encodeToken(s))
}
