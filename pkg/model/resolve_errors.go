package model

import (
	"cmp"
	"slices"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// setErrors sets st.Errors for a location of e routed to be: e's
// custom-http-errors, else the ConfigMap's; the default-backend
// annotation's Service (its first port), else the default backend.
//
// e is nil for a catch-all without Ingress: the ConfigMap's codes only.
func (b *builder) setErrors(e *intent.Entry, st *config.LocationSettings, be *backendState) {
	var own config.CustomErrors
	var fallback *backendState
	if e != nil {
		own, fallback = e.Settings.Errors, b.errorBackendOf(e)
	}
	codes := own.Codes
	if codes == nil && b.global.CustomHTTPErrors != "" {
		codes, _ = intent.ParseHTTPErrors(b.global.CustomHTTPErrors)
	}
	if len(codes) == 0 && fallback == nil {
		return
	}
	ce := &config.CustomErrors{Codes: slices.Clone(codes), NoIntercept: own.NoIntercept}
	ce.Global = len(codes) > 0 && intent.JoinCodes(codes) == b.global.CustomHTTPErrors
	if len(ce.Codes) == 0 {
		ce.Codes = nil
	}
	switch {
	case fallback != nil:
		ce.Backend, ce.Fallback = fallback.name, true
	case b.defaultBackend != nil:
		ce.Backend = b.defaultBackend.name
	}
	if be != nil {
		ce.Service, ce.ServicePort = be.key.service, be.key.port
	}
	st.Errors = ce
}

// errorBackendOf resolves e's default-backend annotation, once per Build;
// nil when unset or unusable (with a Problem). buildPath calls it, so that
// the backend is used before finishBackends, and the first call checks
// proxy-buffer-size (see checkBufferSize).
func (b *builder) errorBackendOf(e *intent.Entry) *backendState {
	if e.Settings.ErrorService == "" {
		// Most Ingresses: nothing to remember (a Problem of
		// checkBufferSize repeated per location is reported once).
		if e.Settings.ProxyBufferSize != "" {
			b.checkBufferSize(e)
		}
		return nil
	}
	if be, ok := b.errorBackends[e]; ok {
		return be
	}
	if b.errorBackends == nil {
		b.errorBackends = map[*intent.Entry]*backendState{}
	}
	b.checkBufferSize(e)
	name := e.Settings.ErrorService
	var be *backendState
	svc := b.s.services[intent.Key{Namespace: e.Key.Namespace, Name: name}]
	if svc == nil || len(svc.ports) == 0 {
		b.entryProblem(e, "%s: Service %s not found or without ports; ignored", e.Setting("default-backend"), name)
	} else {
		var err error
		if be, err = b.backendFor(e.Key.Namespace, intent.BackendRef{Service: name, PortNumber: svc.ports[0].port}); err != nil {
			b.entryProblem(e, "%s: %v; ignored", e.Setting("default-backend"), err)
			be = nil
		} else {
			be.use(nil)
		}
	}
	b.errorBackends[e] = be
	return be
}

// checkBufferSize reports e's proxy-buffer-size when it is larger than the
// ConfigMap's, which every route uses: proxy_buffer_size takes no
// variables. A size up to the ConfigMap's is served by it.
func (b *builder) checkBufferSize(e *intent.Entry) {
	want, ok := e.Settings.ProxyBufferSize.Bytes()
	if !ok {
		return
	}
	global := cmp.Or(b.global.Nginx.ProxyBufferSize, config.DefaultGlobal().Nginx.ProxyBufferSize)
	if have, _ := global.Bytes(); want > have {
		b.entryProblem(e, "%s=%s: larger than the ConfigMap's proxy-buffer-size %s, which every route uses "+
			"(an nginx directive that takes no variables); set the ConfigMap key; left out", e.Setting("proxy-buffer-size"), e.Settings.ProxyBufferSize, global)
	}
}
