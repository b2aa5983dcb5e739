// Package golden compares test output with testdata/<name>.golden files and
// rewrites them when the tests run with -update. Every package's golden
// files (rendered nginx.conf, Configurations, replay output, encodings,
// RBAC) go through it, so they all behave alike.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// update is the conventional -update flag of golden-file tests.
var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// Updating reports whether the tests run with -update.
func Updating() bool { return *update }

// Path is the golden file of name: testdata/<name>.golden.
func Path(name string) string { return filepath.Join("testdata", name+".golden") }

// Check compares got with the golden file of name, or rewrites that file
// under -update. A difference fails the test and shows the first
// differing line; hint says what a change means (may be empty).
func Check(t testing.TB, name string, got []byte, hint string) {
	t.Helper()
	path := Path(name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s; %s(run with -update to accept, and review the diff)\n%s",
			path, hintText(hint), FirstDiff(string(want), string(got)))
	}
}

func hintText(h string) string {
	if h == "" {
		return ""
	}
	return h + " "
}

// FirstDiff shows the first line where want and got differ.
func FirstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, wl, gl)
		}
	}
	return ""
}
