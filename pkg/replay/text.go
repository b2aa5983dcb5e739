package replay

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"bufio"
	"fmt"
	"io"
	"strings"
)

// maxListed bounds the endpoints printed per backend in text output; the
// rest are counted. JSON output lists them all.
const maxListed = 8

// WriteText writes a readable summary of the snapshot: where it is, whether
// its history is complete, then the servers, backends, certificates and
// problems of the Configuration.
func (s *Snapshot) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	c := s.Configuration
	fmt.Fprintf(bw, "Stream %s at seq %d (%s)", s.Stream, s.Sequence, formatTime(s.Time))
	if s.Point.Seq == 0 {
		fmt.Fprintf(bw, ", the last message at or before %s", formatTime(s.Point.Time))
	}
	fmt.Fprintf(bw, "\nEvents applied: %d, objects: %d\n", s.Events, s.Objects)
	writeHistory(bw, &s.History)
	fmt.Fprintf(bw, "Checksum: %s\n", c.Checksum)
	writeServers(bw, c.Servers)
	writeBackends(bw, c.Backends)
	writeCertificates(bw, c)
	writeStreams(bw, c)
	fmt.Fprintf(bw, "\nDefault backend: %s\n", orDefault(c.DefaultBackend, "built-in 404"))
	if len(c.Problems) > 0 {
		fmt.Fprintf(bw, "\nProblems (%d)\n", len(c.Problems))
		for _, p := range c.Problems {
			fmt.Fprintf(bw, "  %s %s: %s\n", p.Kind, keyOf(p.Namespace, p.Name), p.Reason)
		}
	}
	writeSkipped(bw, s.Skipped)
	return bw.Flush()
}

// writeStreams lists the TCP and UDP services and the passthrough hosts,
// when there are any.
func writeStreams(w io.Writer, c *config.Configuration) {
	if len(c.L4) > 0 {
		fmt.Fprintf(w, "\nTCP and UDP services (%d)\n", len(c.L4))
		for _, s := range c.L4 {
			proxy := ""
			if s.DecodeProxy || s.EncodeProxy {
				proxy = fmt.Sprintf("  PROXY decode %t encode %t", s.DecodeProxy, s.EncodeProxy)
			}
			fmt.Fprintf(w, "  %s %d -> %s/%s:%s  %s%s\n", s.Protocol, s.Port, s.Namespace, s.Service, s.ServicePort, streamEndpoints(s.Endpoints), proxy)
		}
	}
	if len(c.Passthrough) > 0 {
		fmt.Fprintf(w, "\nSSL passthrough hosts (%d)\n", len(c.Passthrough))
		for _, p := range c.Passthrough {
			fmt.Fprintf(w, "  %s -> %s (%s)  %s\n", p.Hostname, p.Backend, p.Ingress, streamEndpoints(p.Endpoints))
		}
	}
}

// streamEndpoints is endpointList for a listener, whose connections are
// closed without endpoints.
func streamEndpoints(eps []config.Endpoint) string {
	if len(eps) == 0 {
		return "0 endpoints (connections are closed)"
	}
	return endpointList(eps)
}

func writeHistory(w io.Writer, h *History) {
	switch {
	case h.Complete:
		fmt.Fprintln(w, "History: complete")
		return
	case len(h.Missing) == 0:
		fmt.Fprintf(w, "History: trimmed: %d older message%s at or before this point were removed (the stream now starts at seq %d);\n",
			h.Removed, plural(int(h.Removed)), h.FirstSequence)
		fmt.Fprintln(w, "  no object is known to be missing, but objects with no message left in the stream cannot be named")
		return
	}
	fmt.Fprintf(w, "History: INCOMPLETE: %d message%s at or before this point were removed (the stream now starts at seq %d)\n",
		h.Removed, plural(int(h.Removed)), h.FirstSequence)
	fmt.Fprintln(w, "  Missing (existed at this point, state unknown):")
	for _, m := range h.Missing {
		fmt.Fprintf(w, "    %s %s (next message: seq %d %s)\n", m.Kind, keyOf(m.Namespace, m.Name), m.NextSequence, m.NextOp)
	}
	fmt.Fprintln(w, "  Objects with no message left in the stream cannot be named and may be missing too.")
}

func writeServers(w io.Writer, servers []config.Server) {
	fmt.Fprintf(w, "\nServers (%d)\n", len(servers))
	for _, s := range servers {
		var flags []string
		if s.TLS {
			flags = append(flags, "tls")
		}
		if s.SSLRedirect {
			flags = append(flags, "ssl-redirect")
		}
		fmt.Fprintf(w, "  %s", s.Hostname)
		if len(flags) > 0 {
			fmt.Fprintf(w, " (%s)", strings.Join(flags, ", "))
		}
		fmt.Fprintln(w)
		for i := range s.Locations {
			l := &s.Locations[i]
			fmt.Fprintf(w, "    %s -> %s", pathString(l), orDefault(l.Backend, "404"))
			if l.Ingress != "" {
				fmt.Fprintf(w, "  [%s]", l.Ingress)
			}
			fmt.Fprintln(w)
		}
	}
}

// pathString is the path with its match type as nginx would write it: "= "
// for Exact, "~* " for a (case-insensitive) regex, nothing for Prefix.
func pathString(l *config.Location) string {
	switch l.PathType {
	case config.PathExact:
		return "= " + l.Path
	case config.PathRegex:
		return "~* " + l.Path
	}
	return l.Path
}

func writeBackends(w io.Writer, backends config.BackendList) {
	fmt.Fprintf(w, "\nBackends (%d)\n", backends.Len())
	for _, b := range backends.All() {
		fmt.Fprintf(w, "  %s  %s  %s\n", b.Name, b.LoadBalance, endpointList(b.Endpoints))
	}
}

// endpointList is "N endpoints: a, b, ..." with at most maxListed shown.
func endpointList(eps []config.Endpoint) string {
	if len(eps) == 0 {
		return "0 endpoints (requests fail with 503)"
	}
	return fmt.Sprintf("%d endpoint%s: %s", len(eps), plural(len(eps)), addresses(eps))
}

func more(n int) string {
	if n > maxListed {
		return fmt.Sprintf(", and %d more", n-maxListed)
	}
	return ""
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func writeCertificates(w io.Writer, c *config.Configuration) {
	fmt.Fprintf(w, "\nCertificates (%d)\n", len(c.Certificates))
	for _, cert := range c.Certificates {
		sum := cert.Checksum
		if cert.Name == config.FallbackCertificateName {
			sum = "- (generated by each syncer at start; not part of the configuration checksum)"
		}
		fmt.Fprintf(w, "  %s  hosts: %s  checksum: %s\n", cert.Name, orDefault(strings.Join(cert.Hosts, ", "), "-"), sum)
	}
	fmt.Fprintf(w, "Default certificate: %s\n", orDefault(c.DefaultCertificate, "none"))
}

func writeSkipped(w io.Writer, skipped []Skipped) {
	if len(skipped) == 0 {
		return
	}
	fmt.Fprintf(w, "\nSkipped messages (%d)\n", len(skipped))
	for _, s := range skipped {
		fmt.Fprintf(w, "  seq %d %s: %s\n", s.Sequence, s.Subject, s.Error)
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// WriteText writes the timeline: where it starts, one line per kept event
// (and, for a change, its diff indented below: the hosts whose routes are
// pushed or removed, servers, locations, backends, endpoints,
// certificates), then the counts and the list of reloads, which only a
// change of the global settings causes, with their reasons.
func (t *Timeline) WriteText(w io.Writer, f Filter) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "Timeline of stream %s from %s to %s\n", t.Stream, pointOr(t.From, "the start"), pointOr(t.To, "the end"))
	if t.Start.Sequence == 0 {
		fmt.Fprint(bw, "Start: nothing applied yet")
	} else {
		fmt.Fprintf(bw, "Start: after seq %d", t.Start.Sequence)
	}
	fmt.Fprintf(bw, ", checksum %s, %d server%s, %d backend%s\n", t.Start.Checksum,
		t.Start.Servers, plural(t.Start.Servers), t.Start.Backends, plural(t.Start.Backends))
	writeHistory(bw, &t.Start.History)
	if desc := f.describe(); desc != "" {
		fmt.Fprintf(bw, "Showing: %s\n", desc)
	}
	fmt.Fprintln(bw)
	for i := range t.Entries {
		writeEntry(bw, &t.Entries[i])
	}
	if t.Events == 0 {
		fmt.Fprintln(bw, "No events in this range.")
	} else {
		fmt.Fprintf(bw, "\n%d event%s from seq %d to seq %d, %d shown: %d changed the configuration, %d reload%s (global settings), %d dynamic update%s.\n",
			t.Events, plural(t.Events), t.FirstSequence, t.LastSequence, len(t.Entries), t.Changes, t.Reloads, plural(t.Reloads),
			t.Dynamic, plural(t.Dynamic))
	}
	writeReloads(bw, t.Entries)
	fmt.Fprintf(bw, "\nChecksum after the last event: %s\n", t.Checksum)
	return bw.Flush()
}

func pointOr(p Point, def string) string {
	if p.IsZero() {
		return def
	}
	return p.String()
}

// describe says what the filter keeps, "" for everything.
func (f Filter) describe() string {
	var parts []string
	if f.Namespace != "" {
		parts = append(parts, "events in namespace "+f.Namespace)
	}
	if f.Host != "" {
		parts = append(parts, "changes touching host "+f.Host)
	}
	s := strings.Join(parts, " or ")
	switch {
	case !f.ChangedOnly:
		return s
	case s == "":
		return "changes only"
	}
	return "changes only, among " + s
}

func writeEntry(w io.Writer, e *Entry) {
	fmt.Fprintf(w, "%s  seq %d  %s %s %s  %s\n", formatTime(e.Time), e.Sequence, e.Op, e.Kind, keyOf(e.Namespace, e.Name), outcome(e))
	if e.Note != "" {
		fmt.Fprintf(w, "    note: %s\n", e.Note)
	}
	for _, r := range e.ReloadReasons {
		fmt.Fprintf(w, "    why: %s\n", r)
	}
	d := &e.Diff
	lines := func(sign, what string, items []string) {
		for _, it := range items {
			fmt.Fprintf(w, "    %s %s %s\n", sign, what, it)
		}
	}
	if len(d.RoutesUpserted) > 0 || len(d.ServersRemoved) > 0 {
		fmt.Fprintf(w, "    routes: %s\n", routesLine(d))
	}
	lines("+", "server", d.ServersAdded)
	lines("-", "server", d.ServersRemoved)
	lines("+", "location", d.LocationsAdded)
	lines("-", "location", d.LocationsRemoved)
	lines("+", "backend", d.BackendsAdded)
	lines("-", "backend", d.BackendsRemoved)
	lines("~", "backend balancing", d.BackendsChanged)
	for _, c := range d.Endpoints {
		fmt.Fprintf(w, "    endpoints %s:%s%s, %s\n", c.Backend, signed(" +", c.Added), signed(" -", c.Removed), left(c.Left))
	}
	lines("+", "certificate", d.CertificatesAdded)
	lines("~", "certificate", d.CertificatesChanged)
	lines("-", "certificate", d.CertificatesRemoved)
	if d.DefaultCertificate != "" {
		fmt.Fprintf(w, "    default certificate: %s\n", d.DefaultCertificate)
	}
	if len(d.Hosts) > 0 {
		fmt.Fprintf(w, "    hosts: %s\n", strings.Join(d.Hosts, ", "))
	}
}

// routesLine says which hosts' route tables a change pushes and removes.
func routesLine(d *Diff) string {
	var parts []string
	if len(d.RoutesUpserted) > 0 {
		parts = append(parts, "hosts upserted "+strings.Join(d.RoutesUpserted, ", "))
	}
	if len(d.ServersRemoved) > 0 {
		parts = append(parts, "removed "+strings.Join(d.ServersRemoved, ", "))
	}
	return strings.Join(parts, "; ")
}

// outcome is the verdict of an entry: RELOAD, dynamic, both, no change or
// the reason it was skipped.
func outcome(e *Entry) string {
	switch {
	case e.Error != "":
		return "SKIPPED: " + e.Error
	case !e.Changed:
		return "no change"
	case e.Reload && e.Dynamic:
		return "RELOAD + dynamic"
	case e.Reload:
		return "RELOAD"
	case e.Dynamic:
		return "dynamic"
	}
	return "changed"
}

// signed lists items with a sign, at most maxListed.
func signed(sign string, items []string) string {
	if len(items) == 0 {
		return ""
	}
	var b strings.Builder
	for _, it := range items[:min(len(items), maxListed)] {
		b.WriteString(sign)
		b.WriteString(it)
	}
	if len(items) > maxListed {
		fmt.Fprintf(&b, " (and %d more)", len(items)-maxListed)
	}
	return b.String()
}

func left(n int) string {
	if n == 0 {
		return "0 left: requests to it fail with 503"
	}
	return fmt.Sprintf("%d left", n)
}

func writeReloads(w io.Writer, entries []Entry) {
	var reloads []*Entry
	for i := range entries {
		if entries[i].Reload {
			reloads = append(reloads, &entries[i])
		}
	}
	if len(reloads) == 0 {
		return
	}
	fmt.Fprintf(w, "\nReloads, for global settings (%d shown)\n", len(reloads))
	for _, e := range reloads {
		fmt.Fprintf(w, "  %s  seq %d  %s %s %s: %s\n", formatTime(e.Time), e.Sequence, e.Op, e.Kind, keyOf(e.Namespace, e.Name),
			strings.Join(e.ReloadReasons, "; "))
	}
}

// keyOf is "namespace/name", or "name" for cluster-scoped objects.
func keyOf(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
