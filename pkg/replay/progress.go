package replay

import (
	"fmt"
	"io"
	"strings"
)

// progressWidth is the number of cells of the bar.
const progressWidth = 30

// ProgressBar draws the progress of a long replay on one line of w (a
// terminal's stderr), redrawn in place with a carriage return whenever the
// whole percentage changes: at most 101 redraws, whatever the length.
type ProgressBar struct {
	w       io.Writer
	label   string
	percent int
}

// NewProgressBar returns a bar titled label that writes to w.
func NewProgressBar(w io.Writer, label string) *ProgressBar {
	return &ProgressBar{w: w, label: label, percent: -1}
}

// Update shows done of total; use it as Options.Progress.
func (p *ProgressBar) Update(done, total uint64) {
	if total == 0 {
		return
	}
	pct := int(min(done, total) * 100 / total)
	if pct == p.percent {
		return
	}
	p.percent = pct
	full := pct * progressWidth / 100
	fmt.Fprintf(p.w, "\r%s [%s%s] %3d%% %d/%d", p.label,
		strings.Repeat("=", full), strings.Repeat(" ", progressWidth-full), pct, done, total)
}

// Finish ends the line, if anything was drawn.
func (p *ProgressBar) Finish() {
	if p.percent >= 0 {
		fmt.Fprintln(p.w)
		p.percent = -1
	}
}
