package replay

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/ingress-sync/ingress-sync/pkg/nginx"
)

// ErrNoSuchHost is returned by RoutesOf for a host the Configuration does
// not serve.
var ErrNoSuchHost = errors.New("replay: no such host")

// RouteView is the route table of router.lua, as `syncer routes` reads it
// from a running nginx and as `syncer replay --routes` converts a replayed
// Configuration (RoutesOf). Both print it with WriteText or WriteJSON, so
// that equal states print equal bytes and can be diffed.
type RouteView struct {
	// Checksum is the Configuration the routes belong to; "" for the view
	// of one host (the Lua endpoint answers a host without it).
	Checksum string       `json:"checksum,omitempty"`
	Hosts    []nginx.Host `json:"hosts"`
}

// NewRouteView returns the view of hosts, sorted by name (the order of
// the Lua endpoint; a Configuration puts the default server first).
func NewRouteView(checksum string, hosts []nginx.Host) RouteView {
	hosts = slices.Clone(hosts)
	for i := range hosts {
		hosts[i].Digest = "" // the Applier's bookkeeping, not a route
	}
	slices.SortStableFunc(hosts, func(a, b nginx.Host) int { return cmp.Compare(a.Name, b.Name) })
	if hosts == nil {
		hosts = []nginx.Host{}
	}
	return RouteView{Checksum: checksum, Hosts: hosts}
}

// RoutesOf converts cfg's Servers as pkg/nginx pushes them (nginx.HostOf):
// every host, or only host when it is not "" (case-insensitive; the error
// wraps ErrNoSuchHost when cfg does not serve it).
func RoutesOf(cfg *config.Configuration, host string) (RouteView, error) {
	if host == "" {
		hosts := make([]nginx.Host, len(cfg.Servers))
		for i := range cfg.Servers {
			hosts[i] = nginx.HostOf(&cfg.Servers[i])
		}
		return NewRouteView(cfg.Checksum, hosts), nil
	}
	for i := range cfg.Servers {
		if strings.EqualFold(cfg.Servers[i].Key(), host) { // "<port>:<name>" on a Gateway's port
			return NewRouteView("", []nginx.Host{nginx.HostOf(&cfg.Servers[i])}), nil
		}
	}
	return RouteView{}, fmt.Errorf("%w: %q (the configuration serves %d hosts)", ErrNoSuchHost, host, len(cfg.Servers))
}

// WriteJSON writes the view as one indented JSON document.
func (v *RouteView) WriteJSON(w io.Writer) error { return writeJSON(w, v) }

// WriteText writes a line saying what the view holds, then a table with
// one line per route: host, type, path, backend ("404" for none), the
// object that defined it ("namespace/name" of an Ingress, "HTTPRoute
// namespace/name" of a route; "-" for the generated catch-all) and its
// settings, space-separated ("-" for none). A host the data plane refused
// is one line saying it answers 503.
func (v *RouteView) WriteText(w io.Writer) error {
	routes := 0
	for _, h := range v.Hosts {
		routes += len(h.Routes)
	}
	if v.Checksum != "" {
		fmt.Fprintf(w, "Routes of configuration %s: ", v.Checksum)
	}
	fmt.Fprintf(w, "%d host%s, %d route%s\n", len(v.Hosts), plural(len(v.Hosts)), routes, plural(routes))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tTYPE\tPATH\tBACKEND\tFROM\tSETTINGS")
	for _, h := range v.Hosts {
		switch {
		case h.Unavailable:
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\tunavailable: answers 503 (the data plane refused its routes)\n", h.Name)
		case h.RedirectTo != "":
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\tredirects every request to %s (from-to-www-redirect)\n", h.Name, h.RedirectTo)
		case len(h.Routes) == 0:
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\tno routes\n", h.Name)
		}
		if h.AppRoot != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\tappRoot=%s\n", h.Name, h.AppRoot)
		}
		if c := h.ClientAuth; c != nil {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t%s\t%s\n", h.Name, c.Ingress, clientAuthSettings(c))
		}
		for i := range h.Routes {
			r := &h.Routes[i]
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", h.Name, r.Type, r.Path, orDefault(r.Backend, "404"),
				orDefault(origin(r), "-"), orDefault(routeSettings(r), "-"))
		}
	}
	return tw.Flush()
}

// origin is the object that defined r: "namespace/name" of an Ingress,
// "Kind namespace/name" of another kind's object; "" for a catch-all.
func origin(r *nginx.Route) string {
	if r.Kind == "" || r.Ingress == "" {
		return r.Ingress
	}
	return r.Kind + " " + r.Ingress
}

// routeSettings lists every setting of r that is set, as key=value in the
// order of the wire format (nginx.Route's JSON, objects in compact JSON):
// a new route setting shows without a change here.
func routeSettings(r *nginx.Route) string {
	b, err := json.Marshal(r)
	if err != nil {
		return "?"
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var s []string
	// The route's JSON is one object of keys and values; Marshal wrote it.
	_, _ = dec.Token()
	for dec.More() {
		tok, _ := dec.Token()
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return "?"
		}
		switch k := tok.(string); k {
		case "path", "type", "backend", "ingress", "kind":
		default:
			s = append(s, k+"="+strings.Trim(string(v), `"`))
		}
	}
	return strings.Join(s, " ")
}
