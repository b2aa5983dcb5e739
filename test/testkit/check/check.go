// Package check holds the assertions the build and translator tests share.
package check

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// Contains wants one string of got per entry of want, in order, each
// containing it.
func Contains(t *testing.T, got, want []string) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = strings.Contains(got[i], want[i])
	}
	if !ok {
		t.Errorf("problems:\n got  %q\n want %q", got, want)
	}
}

// Equal compares with reflect.DeepEqual and shows both as JSON.
func Equal(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Errorf("%s:\n got  %s\n want %s", what, g, w)
	}
}
