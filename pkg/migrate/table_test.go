package migrate

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/test/testkit/golden"
)

const migrationDoc = "../../docs/migration.md"

// TestMigrationDocTable keeps the table of docs/migration.md, between
// TableBegin and TableEnd, equal to the registry; -update rewrites it.
func TestMigrationDocTable(t *testing.T) {
	doc, err := os.ReadFile(migrationDoc)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := strings.Cut(string(doc), TableBegin+"\n")
	current, after, ok2 := strings.Cut(rest, TableEnd)
	if !ok || !ok2 {
		t.Fatalf("%s lacks the markers %q and %q", migrationDoc, TableBegin, TableEnd)
	}
	var table bytes.Buffer
	if err := WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if table.String() == current {
		return
	}
	if golden.Updating() {
		out := before + TableBegin + "\n" + table.String() + TableEnd + after
		if err := os.WriteFile(migrationDoc, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the table of %s differs from pkg/model/registry.go (run go test ./pkg/migrate -run TestMigrationDocTable -update)\n%s",
		migrationDoc, golden.FirstDiff(current, table.String()))
}
