package nginx

import (
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/model"
)

// Host is one entry of router.lua's route table: the routes of one
// model.Server. It is the wire format of POST /configuration/routes.
type Host struct {
	// Name is the Server's Hostname: exact, "*.example.com" or "_".
	Name   string  `json:"name"`
	Routes []Route `json:"routes,omitempty"`
	// Unavailable makes the host answer 503: its routes were refused.
	Unavailable bool `json:"unavailable,omitempty"`
}

// Route is one Location of a Server, with its settings resolved against
// the Server (the redirect) and converted to what Lua applies. Zero values
// mean "as nginx.conf says" (timeouts, protocol) or "off".
type Route struct {
	Path string `json:"path"`
	// Type is "exact", "prefix" or "regex".
	Type    string `json:"type"`
	Backend string `json:"backend,omitempty"`
	Ingress string `json:"ingress,omitempty"`
	// Redirect sends plain HTTP requests to HTTPS with a 308.
	Redirect bool `json:"redirect,omitempty"`
	// Protocol is "http" (when empty), "https", "grpc" or "grpcs".
	Protocol       string `json:"protocol,omitempty"`
	ConnectTimeout int    `json:"connectTimeout,omitempty"`
	SendTimeout    int    `json:"sendTimeout,omitempty"`
	ReadTimeout    int    `json:"readTimeout,omitempty"`
	// BodySize is the request body limit in bytes (0: none); nil takes
	// the global proxy-body-size.
	BodySize *int64   `json:"bodySize,omitempty"`
	Rewrite  string   `json:"rewrite,omitempty"`
	Allow    []string `json:"allow,omitempty"`
	// Canary is the alternative backend chosen per request (lua/canary.lua).
	Canary *model.Canary `json:"canary,omitempty"`
}

// HostOf converts a Server of a Configuration built by model.Build. Every
// value was validated there; HostOf only changes its form.
func HostOf(s *model.Server) Host {
	h := Host{Name: s.Hostname, Routes: make([]Route, len(s.Locations))}
	for i := range s.Locations {
		h.Routes[i] = routeOf(s, &s.Locations[i])
	}
	return h
}

func routeOf(s *model.Server, l *model.Location) Route {
	st := &l.Settings
	r := Route{
		Path:           l.Path,
		Type:           strings.ToLower(string(l.PathType)),
		Backend:        l.Backend,
		Ingress:        l.Ingress,
		Redirect:       s.RedirectsToHTTPS(l),
		Protocol:       strings.ToLower(st.BackendProtocol),
		ConnectTimeout: st.ProxyConnectTimeout,
		SendTimeout:    st.ProxySendTimeout,
		ReadTimeout:    st.ProxyReadTimeout,
		Rewrite:        st.RewriteTarget,
		Allow:          st.AllowSourceRange,
		Canary:         l.Canary,
	}
	if r.Protocol == "http" {
		r.Protocol = ""
	}
	if st.ProxyBodySize != "" {
		if n, ok := st.ProxyBodySize.Bytes(); ok {
			r.BodySize = &n
		}
	}
	return r
}

// hostsOf converts Servers.
func hostsOf(servers []model.Server) []Host {
	out := make([]Host, len(servers))
	for i := range servers {
		out[i] = HostOf(&servers[i])
	}
	return out
}
