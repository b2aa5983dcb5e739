package inspect

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/ingress-sync/ingress-sync/pkg/nginx"
)

// General is what `syncer general` shows: the state a running nginx
// reports (GET /configuration/version) and the settings nginx.conf passed
// to its Lua side (GET /configuration/general).
type General struct {
	Version  nginx.Version  `json:"version"`
	Settings map[string]any `json:"settings"`
}

// WriteTable prints one setting per row: the state first, then the
// settings by name.
func (g *General) WriteTable(w io.Writer) error {
	v := &g.Version
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SETTING\tVALUE")
	for _, row := range [][2]string{
		{"nginx.conf checksum", v.Checksum},
		{"configuration checksum", orDash(v.Configuration)},
		{"worker pid", fmt.Sprint(v.PID)},
		{"routes", fmt.Sprintf("version %d, generation %d", v.RoutesVersion, v.RoutesGeneration)},
		{"backends", fmt.Sprintf("version %d, generation %d", v.BackendsVersion, v.BackendsGeneration)},
		{"certificates", fmt.Sprintf("version %d, generation %d", v.CertificatesVersion, v.CertificatesGeneration)},
	} {
		fmt.Fprintf(tw, "%s\t%s\n", row[0], row[1])
	}
	names := make([]string, 0, len(g.Settings))
	for k := range g.Settings {
		if k != "checksum" { // the nginx.conf checksum, above
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		fmt.Fprintf(tw, "%s\t%s\n", strings.ReplaceAll(k, "_", " "), settingText(g.Settings[k]))
	}
	return tw.Flush()
}

// settingText prints a setting as JSON, strings unquoted.
func settingText(v any) string {
	if s, ok := v.(string); ok {
		return orDash(s)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}
