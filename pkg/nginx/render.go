package nginx

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"text/template"

	"github.com/ingress-sync/ingress-sync/pkg/model"
)

//go:embed nginx.conf.tmpl
var confTemplate string

// Renderer renders nginx.conf. It is safe for concurrent use.
type Renderer struct {
	opts Options
	tmpl *template.Template
}

// NewRenderer validates opts (see Options.Complete) and parses the template.
func NewRenderer(opts Options) (*Renderer, error) {
	o, err := opts.Complete()
	if err != nil {
		return nil, err
	}
	t, err := template.New("nginx.conf").Option("missingkey=error").Parse(confTemplate)
	if err != nil {
		return nil, fmt.Errorf("parse nginx.conf template: %w", err)
	}
	return &Renderer{opts: o, tmpl: t}, nil
}

// Options returns the completed options the renderer uses.
func (r *Renderer) Options() Options { return r.opts }

// Render returns nginx.conf for cfg. An invalid value in cfg is an error
// wrapping ErrInvalidValue that names it; nothing is rendered then.
func (r *Renderer) Render(cfg *model.Configuration) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(4096 + 512*len(cfg.Servers))
	if err := r.RenderTo(&buf, cfg); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// RenderTo writes nginx.conf for cfg to w. On error w may hold a partial
// file only if the error is a write error; validation happens first.
func (r *Renderer) RenderTo(w io.Writer, cfg *model.Configuration) error {
	v, err := newView(&r.opts, cfg)
	if err != nil {
		return fmt.Errorf("render nginx.conf: %w", err)
	}
	if err := r.tmpl.Execute(w, v); err != nil {
		return fmt.Errorf("render nginx.conf: %w", err)
	}
	return nil
}
