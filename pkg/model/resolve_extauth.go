package model

import (
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// externalAuth returns the ExternalAuth of e's locations (nil without),
// resolved once per Build: its own auth-url, else the ConfigMap's
// global-auth-url unless enable-global-auth is false.
func (b *builder) externalAuth(e *intent.Entry) *config.ExternalAuth {
	in := &e.Settings.ExtAuth
	if !in.Requested {
		if b.globalAuth == nil || in.GlobalOff {
			return nil
		}
		if e.Settings.Auth.SatisfyAny {
			ea := *b.globalAuth
			ea.SatisfyAny = true
			return &ea
		}
		return b.globalAuth
	}
	return resolveRef(b, e, refUse[*config.ExternalAuth]{
		objectRef:   objectRef{refConfigMap, "auth-proxy-set-headers", in.ProxySetHeaders},
		invalid:     in.Err,
		optional:    true,
		parse:       (*builder).externalAuthFrom,
		unavailable: func(*intent.Entry) *config.ExternalAuth { return &config.ExternalAuth{Unavailable: true} },
	})
}

// externalAuthFrom makes e's ExternalAuth with the headers of its
// auth-proxy-set-headers o (none without), or says why it cannot.
func (b *builder) externalAuthFrom(e *intent.Entry, o refObject) (*config.ExternalAuth, string) {
	ea := e.Settings.ExtAuth.ExternalAuth()
	ea.SatisfyAny = e.Settings.Auth.SatisfyAny
	if o.configMap == nil {
		return ea, ""
	}
	hs, problems := o.headers(headerRule{noDollar: true})
	if len(problems) > 0 {
		return nil, problems[0]
	}
	ea.ProxySetHeaders = hs
	return ea, ""
}

// noExternalAuth reports whether the location path gets no external auth
// (no-auth-locations, as ingress-nginx: the path starts with an entry).
func noExternalAuth(ga *config.GlobalAuth, path string) bool {
	if ga.NoAuthLocationsSet {
		return pathInList(path, ga.NoAuthLocations)
	}
	return pathInList(path, intent.DefaultNoAuthLocations)
}

// pathInList reports whether path starts with one of the canonical list's
// paths, as ingress-nginx's isLocationInLocationList.
func pathInList(path, list string) bool {
	for list != "" {
		var p string
		p, list, _ = strings.Cut(list, ",")
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}
