package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/test/testkit/fieldwalk"
)

// The checksum (checksum.go and the canonical writers next to each type)
// and Diff each list the fields of a Configuration by hand. The test here
// walks the types instead: every field reachable from a Configuration is
// changed in turn, and a field a list forgot fails it by name.

// fieldOptions lets fieldwalk reach the Backends (a BackendList keeps
// them in unexported chunks).
func fieldOptions() *fieldwalk.Options {
	return &fieldwalk.Options{Lists: map[reflect.Type]fieldwalk.List{
		reflect.TypeFor[config.BackendList](): {
			Elem: reflect.TypeFor[config.Backend](),
			Of: func(s reflect.Value) reflect.Value {
				bs := make([]*config.Backend, s.Len())
				for i := range bs {
					bs[i] = s.Index(i).Addr().Interface().(*config.Backend)
				}
				return reflect.ValueOf(config.NewBackendList(bs))
			},
			At: func(v reflect.Value, i int) reflect.Value {
				return reflect.ValueOf(v.Interface().(config.BackendList).At(i)).Elem()
			},
		},
	}}
}

// filledConfiguration returns a Configuration with every field set (one
// element in every slice, every pointer allocated, each value its own),
// sealed as Build leaves it.
func filledConfiguration() *config.Configuration {
	c := &config.Configuration{}
	fieldwalk.Fill(c, fieldOptions())
	sealConfiguration(c)
	return c
}

// sealConfiguration recomputes what Build derives from the rest: the
// checksums of the Backends, of the Certificates and of c, and the names
// of the backend TLS profiles (a hash of their content).
func sealConfiguration(c *config.Configuration) {
	for _, b := range c.Backends.All() {
		b.Checksum = config.BackendChecksum(b)
	}
	for i := range c.Certificates {
		cert := &c.Certificates[i]
		cert.Checksum = config.CertificateChecksum(cert.Cert, cert.Key)
	}
	for i := range c.UpstreamTLS {
		c.UpstreamTLS[i].Name = c.UpstreamTLS[i].ProfileName()
	}
	c.Checksum = c.ComputeChecksum()
}

// notCounted are the fields that, changed alone, must leave the checksum
// as it is, and why.
func notCounted() map[string]string {
	derived := "derived from the rest, recomputed as Build computes it: "
	return map[string]string{
		"Problems":                 "what Build left out and why: nginx does not see it",
		"Checksum":                 "the checksum itself",
		"Backends[0].Checksum":     derived + "BackendChecksum of the Backend's other fields",
		"Certificates[0].Checksum": derived + "CertificateChecksum of Cert and Key",
		"UpstreamTLS[0].Name":      derived + "profileName, the hash of the profile's other fields",
		"gen":                      "Incremental's bookkeeping, which lets Diff skip what a patch shares (unexported)",
		"patch":                    "Incremental's bookkeeping, which lets Diff skip what a patch shares (unexported)",
	}
}

// What Diff reports for a change: a reload, upserts or removals of one
// kind of part, the default certificate name, or nothing.
const (
	reportsReload       = "reload"
	reportsServers      = "servers"
	reportsBackends     = "backends"
	reportsCertificates = "certificates"
	reportsDefaultCert  = "default certificate"
	reportsNothing      = "nothing"
)

// diffKind is what Diff must report for a change of the fields at a path
// and why.
type diffKind struct{ kind, why string }

// diffKinds says what Diff reports for a change of each field: the entry
// of the longest path the field is under.
func diffKinds() map[string]diffKind {
	routes := diffKind{reportsNothing, "a route default or value: Build puts it into the Servers' locations, where Diff sees it"}
	headers := diffKind{reportsNothing, "in the Servers' headers (Build); nginx.conf holds only whether any response gets headers"}
	backends := diffKind{reportsNothing, "a backend default: Build puts it into the Backends, where Diff sees it"}
	stream := diffKind{reportsNothing, "the Applier compares the listeners and the endpoint files itself (pkg/nginx stream.go, TestStreamSeesEveryField)"}
	return map[string]diffKind{
		"Global":                        {reportsReload, "nginx.conf holds it (Global.rendered)"},
		"Global.SSLRedirect":            routes,
		"Global.ForceSSLRedirect":       routes,
		"Global.AllowSnippets":          {reportsNothing, "decides which annotations Build takes: Diff sees their result in the Servers"},
		"Global.ProxyConnectTimeout":    routes,
		"Global.ProxyReadTimeout":       routes,
		"Global.ProxySendTimeout":       routes,
		"Global.ProxyBodySize":          routes,
		"Global.ProxySetHeaders":        headers,
		"Global.AddHeaders":             headers,
		"Global.AllowedResponseHeaders": headers,
		"Global.ServiceUpstream":        backends,
		"Global.LoadBalance":            backends,
		"Global.Proxy":                  routes,
		"Global.AllowSourceRange":       routes,
		"Global.DenySourceRange":        routes,
		"Global.LimitReqStatusCode":     routes,
		"Global.LimitConnStatusCode":    routes,
		"Global.LimitRate":              routes,
		"Global.LimitRateAfter":         routes,
		"Global.NoTLSRedirectLocations": routes,
		"Global.BlockUserAgents":        {reportsNothing, "in every Server's Block (Build)"},
		"Global.BlockReferers":          {reportsNothing, "in every Server's Block (Build)"},
		"Global.BlockCIDRs":             {reportsNothing, "in every Server's Block (Build)"},
		"Global.Auth":                   routes,
		"Global.ProxySSLLocationOnly":   routes,
		"Global.ModSecurity":            routes,
		"Global.OpenTelemetry":          {reportsNothing, "route defaults in every Location's Tracing (Build); the syncer's exporter reads the rest from the running Configuration"},
		"Servers":                       {reportsServers, "the route table of a host, pushed to Lua"},
		"Backends":                      {reportsBackends, "pushed to the Lua balancer"},
		"Certificates":                  {reportsCertificates, "pushed to Lua"},
		"UpstreamTLS":                   {reportsReload, "nginx.conf holds the profiles' fixed locations"},
		"Listeners":                     {reportsReload, "nginx.conf holds a listen directive per Gateway listener port"},
		"Listeners[0].Gateway":          {reportsNothing, "for Problems and inspection: nginx.conf holds the ports only"},
		"L4":                            stream,
		"Passthrough":                   stream,
		"Streams":                       stream,
		"DefaultCertificate":            {reportsDefaultCert, "pushed to Lua with the certificates"},
		"DefaultBackend":                {reportsNothing, "Build puts it into every Server's catch-all route, where Diff sees it"},
	}
}

// kindAt returns the entry of kinds for l: that of the longest path l is
// under.
func kindAt(kinds map[string]diffKind, l fieldwalk.Leaf) (diffKind, bool) {
	best, found := "", false
	for path := range kinds {
		if l.Under(path) && len(path) >= len(best) {
			best, found = path, true
		}
	}
	return kinds[best], found
}

// diffReports is what a Change reports, as diffKinds names it.
func diffReports(ch config.Change) string {
	var out []string
	if ch.Reload {
		out = append(out, reportsReload)
	}
	if len(ch.ServersUpserted)+len(ch.ServersRemoved) > 0 {
		out = append(out, reportsServers)
	}
	if len(ch.BackendsUpserted)+len(ch.BackendsRemoved) > 0 {
		out = append(out, reportsBackends)
	}
	if len(ch.CertificatesUpserted)+len(ch.CertificatesRemoved) > 0 {
		out = append(out, reportsCertificates)
	}
	if ch.DefaultCertificate != "" {
		out = append(out, reportsDefaultCert)
	}
	if len(out) == 0 {
		return reportsNothing
	}
	return strings.Join(out, ", ")
}

// TestChecksumAndDiffSeeEveryField changes every field reachable from a
// Configuration in turn (Global and its settings, each Server, Location,
// LocationSettings and what they hold, Backend, Certificate, UpstreamTLS,
// L4Service, PassthroughHost...; pointers set to nil and slices emptied
// too) on a copy of a filled Configuration, and fails, naming the field,
// when the checksum stays the same or equals that of another change, or
// when Diff does not report the kind of change diffKinds gives. The
// fields of notCounted must not change the checksum.
func TestChecksumAndDiffSeeEveryField(t *testing.T) {
	base := filledConfiguration()
	if ch := config.Diff(base, filledConfiguration()); diffReports(ch) != reportsNothing || base.Checksum != filledConfiguration().Checksum {
		t.Fatalf("two equal Configurations: Diff reports %s", diffReports(ch))
	}
	leaves := fieldwalk.Leaves(reflect.TypeFor[config.Configuration](), fieldOptions())
	if len(leaves) < 300 {
		t.Fatalf("only %d fields found", len(leaves))
	}
	skip, kinds := notCounted(), diffKinds()
	seen := map[string]string{base.Checksum: ""}
	for _, l := range leaves {
		if reason, ok := skipped(skip, l); ok {
			if l.Change == nil {
				continue
			}
			c := filledConfiguration()
			l.Change(c)
			sealConfiguration(c)
			if c.Checksum != base.Checksum {
				t.Errorf("changing %s changes the checksum, but notCounted says: %s", l, reason)
			}
			continue
		}
		if l.Change == nil {
			t.Errorf("%s: unexported; list it in notCounted with the reason it does not count", l)
			continue
		}
		c := filledConfiguration()
		l.Change(c)
		sealConfiguration(c)
		if other, dup := seen[c.Checksum]; dup && c.Checksum == base.Checksum {
			t.Errorf("changing %s leaves the checksum unchanged", l)
		} else if dup {
			t.Errorf("changing %s gives the checksum of changing %s", l, other)
		}
		seen[c.Checksum] = l.String()
		want, ok := kindAt(kinds, l)
		if !ok {
			t.Errorf("%s: no entry in diffKinds", l)
			continue
		}
		if got := diffReports(config.Diff(base, c)); got != want.kind {
			t.Errorf("changing %s: Diff reports %s, want %s (%s)", l, got, want.kind, want.why)
		}
	}
	for path := range skip {
		if !slices.ContainsFunc(leaves, func(l fieldwalk.Leaf) bool { return l.Under(path) }) {
			t.Errorf("notCounted lists %s, which is no field", path)
		}
	}
	for path := range kinds {
		if !slices.ContainsFunc(leaves, func(l fieldwalk.Leaf) bool { return l.Under(path) }) {
			t.Errorf("diffKinds lists %s, which is no field", path)
		}
	}
}

// skipped returns the reason notCounted gives for l, if any.
func skipped(skip map[string]string, l fieldwalk.Leaf) (string, bool) {
	for path, reason := range skip {
		if l.Under(path) {
			return reason, true
		}
	}
	return "", false
}
