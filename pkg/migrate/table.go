package migrate

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"fmt"
	"io"
	"strings"
)

// Markers of the generated table in docs/migration.md.
const (
	TableBegin = "<!-- BEGIN generated table: go test ./pkg/migrate -run TestMigrationDocTable -update -->"
	TableEnd   = "<!-- END generated table -->"
)

// WriteTable writes model's registry as Markdown: every ingress-nginx
// annotation and ConfigMap key with its status in ingress-sync.
func WriteTable(w io.Writer) error {
	var b strings.Builder
	writeSection(&b, "Annotations (`nginx.ingress.kubernetes.io/...`)", "annotation", ingress.Annotations())
	b.WriteString("\n")
	writeSection(&b, "ConfigMap keys", "key", ingress.ConfigKeys())
	_, err := io.WriteString(w, b.String())
	return err
}

func writeSection(b *strings.Builder, title, column string, entries []ingress.RegistryEntry) {
	counts := map[ingress.Status]int{}
	for _, e := range entries {
		counts[e.Status]++
	}
	fmt.Fprintf(b, "### %s\n\n", title)
	fmt.Fprintf(b, "%d names: %d supported, %d supported with a documented difference, %d refused, %d not supported.\n\n",
		len(entries), counts[ingress.StatusSupported], counts[ingress.StatusSupportedWithDifference],
		counts[ingress.StatusRefused], counts[ingress.StatusNotSupported])
	fmt.Fprintf(b, "| %s | status | difference or reason |\n|---|---|---|\n", column)
	for _, e := range entries {
		fmt.Fprintf(b, "| `%s` | %s | %s |\n", e.Name, e.Status, strings.ReplaceAll(e.Note, "|", `\|`))
	}
}
