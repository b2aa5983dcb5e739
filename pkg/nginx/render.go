package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"bytes"
	_ "embed"
	"fmt"
	"text/template"
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

// Render returns nginx.conf for cfg. Only cfg.Global, the ports of its
// listeners (L4, Gateway) and the options reach it: hosts, paths, backends
// and certificates are pushed to Lua. An invalid
// value is an error wrapping ErrInvalidValue that names it; nothing is
// rendered then.
func (r *Renderer) Render(cfg *config.Configuration) ([]byte, error) {
	conf, _, err := r.render(cfg, cfg.UpstreamTLS)
	return conf, err
}

// render returns nginx.conf for cfg's global settings, L4 listeners,
// Gateway listener ports and
// error code sets (errorsets.go) with the backend TLS profiles tls, and its checksum, which the file's
// workers report at GET /configuration/version.
func (r *Renderer) render(cfg *config.Configuration, tls []config.UpstreamTLS) ([]byte, string, error) {
	v, err := newView(&r.opts, &cfg.Global, listenersOf(cfg.L4, cfg.Streams), cfg.Listeners, tls, errorSetsOf(cfg.Servers), modSecProfilesOf(cfg.Servers))
	if err != nil {
		return nil, "", fmt.Errorf("render nginx.conf: %w", err)
	}
	for _, n := range v.Notes {
		r.opts.Logger.Warn("global setting not applied", "reason", n)
	}
	var buf bytes.Buffer
	buf.Grow(8192)
	if err := r.tmpl.Execute(&buf, v); err != nil {
		return nil, "", fmt.Errorf("render nginx.conf: %w", err)
	}
	return buf.Bytes(), v.Checksum, nil
}
