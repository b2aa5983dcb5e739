package churn

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// WriteScenariosJSON writes the results as indented JSON.
func WriteScenariosJSON(w io.Writer, results []ScenarioResult) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(results)
}

// WriteScenariosMarkdown writes one section per scenario: its targets
// (met or missed), then every figure.
func WriteScenariosMarkdown(w io.Writer, results []ScenarioResult) error {
	for _, r := range results {
		fmt.Fprintf(w, "### %s\n\n%s (%.0f s). %s\n\n", r.Name, r.Title, r.Seconds, r.About)
		if r.Error != "" {
			fmt.Fprintf(w, "**Error:** `%s`\n\n", oneLine(r.Error))
		}
		if len(r.Checks) > 0 {
			fmt.Fprintln(w, "| target | wanted | measured | met |\n|---|---|---|---|")
			for _, c := range r.Checks {
				fmt.Fprintf(w, "| %s | %s | %s | %s |\n", c.Name, c.Target, withUnit(c.Value, c.Unit), yesNo(c.Met))
			}
			fmt.Fprintln(w)
		}
		if len(r.Figures) > 0 {
			fmt.Fprintln(w, "| figure | value |\n|---|---|")
			for _, f := range r.Figures {
				fmt.Fprintf(w, "| %s | %s |\n", f.Name, withUnit(f.Value, f.Unit))
			}
			fmt.Fprintln(w)
		}
	}
	return nil
}

// WriteScenariosTable writes the targets and figures as plain text.
func WriteScenariosTable(w io.Writer, results []ScenarioResult) error {
	for _, r := range results {
		fmt.Fprintf(w, "== %s: %s (%.0fs)\n", r.Name, r.Title, r.Seconds)
		if r.Error != "" {
			fmt.Fprintf(w, "   error: %s\n", r.Error)
		}
		for _, c := range r.Checks {
			fmt.Fprintf(w, "   target %-45s %-14s measured %-14s %s\n", c.Name, c.Target, withUnit(c.Value, c.Unit), metWord(c.Met))
		}
		for _, f := range r.Figures {
			fmt.Fprintf(w, "   %-45s %s\n", f.Name, withUnit(f.Value, f.Unit))
		}
	}
	return nil
}

func withUnit(v float64, unit string) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if v >= 100 || v <= -100 {
		s = strconv.FormatFloat(v, 'f', 0, 64)
	} else if v != float64(int64(v)) {
		s = strconv.FormatFloat(v, 'f', 2, 64)
	}
	if unit == "" {
		return s
	}
	if unit[0] == '/' || unit[0] == '%' {
		return s + unit
	}
	return s + " " + unit
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}

func metWord(b bool) string {
	if b {
		return "met"
	}
	return "MISSED"
}

func oneLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i] + " …"
		}
	}
	return s
}
