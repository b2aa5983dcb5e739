package migrate

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// ErrDifferences is returned by Report.Err when something would not
// behave as in ingress-nginx.
var ErrDifferences = errors.New("would not behave as in ingress-nginx")

// Finding is one annotation or ConfigMap key in use and its status.
type Finding struct {
	// Kind, Namespace and Name are the object's: Ingress or ConfigMap.
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Type is "annotation" (Key without the nginx.ingress.kubernetes.io/
	// prefix) or "key" (a ConfigMap key).
	Type   string         `json:"type"`
	Key    string         `json:"key"`
	Status ingress.Status `json:"status"`
	Note   string         `json:"note,omitempty"`
}

// Report is what Check found.
type Report struct {
	Source string `json:"source"`
	// Ingresses is the number of Ingresses checked; ConfigMap the
	// controller ConfigMap read, or "".
	Ingresses int    `json:"ingresses"`
	ConfigMap string `json:"configMap,omitempty"`
	// Findings are sorted by object (the ConfigMap, then the Ingresses
	// by namespace and name) and name.
	Findings []Finding `json:"findings"`
	// Problems are those the syncer's builder reports for the objects checked
	// (invalid values, conflicts, missing references), but those a
	// Finding already says.
	Problems []config.Problem `json:"problems"`
	Notes    []string         `json:"notes,omitempty"`
	Summary  Summary          `json:"summary"`
}

// Summary counts the findings by status.
type Summary struct {
	Supported      int `json:"supported"`
	WithDifference int `json:"supportedWithDifference"`
	Refused        int `json:"refused"`
	NotSupported   int `json:"notSupported"`
	Unknown        int `json:"unknown"`
	Problems       int `json:"problems"`
	// Failing counts what would not behave as in ingress-nginx: every
	// finding but the supported ones, and every Problem.
	Failing int `json:"failing"`
	// OK is Failing == 0.
	OK bool `json:"ok"`
}

func (r *Report) summarize() {
	s := Summary{Problems: len(r.Problems)}
	for _, f := range r.Findings {
		switch f.Status {
		case ingress.StatusSupported:
			s.Supported++
		case ingress.StatusSupportedWithDifference:
			s.WithDifference++
		case ingress.StatusRefused:
			s.Refused++
		case ingress.StatusNotSupported:
			s.NotSupported++
		default:
			s.Unknown++
		}
	}
	s.Failing = len(r.Findings) - s.Supported + s.Problems
	s.OK = s.Failing == 0
	r.Summary = s
}

// Err is nil when everything would behave as in ingress-nginx, else an
// error wrapping ErrDifferences.
func (r *Report) Err() error {
	if r.Summary.OK {
		return nil
	}
	return fmt.Errorf("%w: %d of %d annotations, keys and problems", ErrDifferences, r.Summary.Failing, len(r.Findings)+r.Summary.Problems)
}

// WriteJSON writes the report as one indented JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	if r.Problems == nil {
		r.Problems = []config.Problem{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes one line per finding, the problems, the notes and a
// summary.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "# migrate-check: %s\n", r.Source)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range r.Findings {
		fmt.Fprintf(tw, "%s %s/%s\t%s %s\t%s\n", f.Kind, f.Namespace, f.Name, f.Type, f.Key, statusText(f.Status, f.Note))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "problem: %s\n", problemText(p))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	s := r.Summary
	fmt.Fprintf(w, "\nsummary: %s, %s; %s in use: %d supported, %d with a documented difference, %d refused, %d not supported, %d unknown; %s\n",
		count(r.Ingresses, "Ingress", "Ingresses"), orText(r.ConfigMap, "no ConfigMap", "ConfigMap "+r.ConfigMap),
		count(len(r.Findings), "annotation or key", "annotations and keys"),
		s.Supported, s.WithDifference, s.Refused, s.NotSupported, s.Unknown, count(s.Problems, "problem", "problems"))
	if s.OK {
		_, err := fmt.Fprintln(w, "result: everything behaves as in ingress-nginx")
		return err
	}
	_, err := fmt.Fprintf(w, "result: %d would not behave as in ingress-nginx\n", s.Failing)
	return err
}

// statusText is the status with its note.
func statusText(s ingress.Status, note string) string {
	var b strings.Builder
	b.WriteString(s.String())
	if note != "" {
		b.WriteString(": " + note)
	}
	return b.String()
}

func problemText(p config.Problem) string {
	if p.Namespace == "" {
		return fmt.Sprintf("%s %s: %s", p.Kind, p.Name, p.Reason)
	}
	return fmt.Sprintf("%s %s/%s: %s", p.Kind, p.Namespace, p.Name, p.Reason)
}

func orText(s, empty, set string) string {
	if s == "" {
		return empty
	}
	return set
}

// count is n with the singular or plural noun.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
