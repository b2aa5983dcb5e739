package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The endpoint files of the stream servers (see stream.go and lua/l4.js):
// one per L4 listener, <protocol>-<port>.json, and passthrough.json with
// SSL passthrough, and one per Gateway stream port (TCP, UDP or TLS), in
// Options.streamDir(). Each is written atomically
// (0644: workers run as nobody) and only when its content changes; the
// next connection reads it, so no endpoint change reloads nginx.

// passthroughFile is the name of the passthrough hosts' file.
const passthroughFile = "passthrough.json"

// l4FileName is the file of an L4 listener.
func l4FileName(p config.L4Protocol, port int) string {
	return strings.ToLower(string(p)) + "-" + strconv.Itoa(port) + ".json"
}

// endpointList returns the endpoints as "addr:port" (IPv6 in brackets),
// leaving out any that is not an IP address and a port (pkg/model
// validated them; this is the writer's own check, so nothing else reaches
// the files).
func endpointList(eps []config.Endpoint) (list []string, dropped int) {
	list = make([]string, 0, len(eps))
	for _, e := range eps {
		a, err := netip.ParseAddr(e.Address)
		if err != nil || a.Zone() != "" || e.Port < 1 || e.Port > 65535 {
			dropped++
			continue
		}
		list = append(list, net.JoinHostPort(a.Unmap().String(), strconv.Itoa(int(e.Port))))
	}
	return list, dropped
}

// streamFiles returns the endpoint files of cfg, by name.
func (a *Applier) streamFiles(cfg *config.Configuration) (map[string][]byte, error) {
	files := make(map[string][]byte, len(cfg.L4)+1)
	for _, s := range cfg.L4 {
		list, dropped := endpointList(s.Endpoints)
		if dropped > 0 {
			a.log.Warn("L4 endpoints left out: not an address and port", "protocol", s.Protocol, "port", s.Port, "count", dropped)
		}
		data, err := json.Marshal(struct {
			Endpoints []string `json:"endpoints"`
		}{list})
		if err != nil {
			return nil, fmt.Errorf("endpoint file: %w", err)
		}
		files[l4FileName(s.Protocol, s.Port)] = data
	}
	if err := a.gatewayStreamFiles(cfg.Streams, files); err != nil {
		return nil, err
	}
	if a.opts.EnableSSLPassthrough {
		data, err := passthroughJSON(cfg.Passthrough, a.log.Warn)
		if err != nil {
			return nil, err
		}
		files[passthroughFile] = data
	}
	return files, nil
}

// streamBackend is a backend of a Gateway stream in its file.
type streamBackend struct {
	Weight    int      `json:"weight"`
	Endpoints []string `json:"endpoints"`
}

// gatewayStreamFiles adds the files of the Gateway streams to files: a
// TCP or UDP port's {"backends": [...]}, a TLS port's {"hosts": {name:
// [...]}} ("" for any name).
func (a *Applier) gatewayStreamFiles(streams []config.Stream, files map[string][]byte) error {
	byPort := map[string]map[string][]streamBackend{}
	for _, st := range streams {
		name := l4FileName(st.Protocol, st.Port)
		if byPort[name] == nil {
			byPort[name] = map[string][]streamBackend{}
		}
		list := make([]streamBackend, 0, len(st.Backends))
		for _, be := range st.Backends {
			eps, dropped := endpointList(be.Endpoints)
			if dropped > 0 {
				a.log.Warn("stream endpoints left out: not an address and port", "route", st.Route, "port", st.Port, "count", dropped)
			}
			list = append(list, streamBackend{Weight: be.Weight, Endpoints: eps})
		}
		byPort[name][strings.ToLower(st.Hostname)] = list
	}
	for name, hosts := range byPort {
		var v any = struct {
			Backends []streamBackend `json:"backends"`
		}{hosts[""]}
		if strings.HasPrefix(name, "tls-") {
			v = struct {
				Hosts map[string][]streamBackend `json:"hosts"`
			}{hosts}
		}
		data, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("stream file: %w", err)
		}
		files[name] = data
	}
	return nil
}

// passthroughJSON renders the passthrough hosts' file; warn reports
// endpoints left out.
func passthroughJSON(hosts []config.PassthroughHost, warn func(string, ...any)) ([]byte, error) {
	m := make(map[string][]string, len(hosts))
	for _, h := range hosts {
		list, dropped := endpointList(h.Endpoints)
		if dropped > 0 {
			warn("passthrough endpoints left out: not an address and port", "host", h.Hostname, "count", dropped)
		}
		m[strings.ToLower(h.Hostname)] = list
	}
	data, err := json.Marshal(struct {
		Hosts map[string][]string `json:"hosts"`
	}{m})
	if err != nil {
		return nil, fmt.Errorf("passthrough file: %w", err)
	}
	return data, nil
}

// writeStreamFiles writes the files whose content differs from the last
// written (all of them when force). A failed write is forgotten, so the
// next call writes that file again.
func (a *Applier) writeStreamFiles(files map[string][]byte, force bool) error {
	if force || a.streamWritten == nil {
		a.streamWritten = map[string][]byte{}
	}
	var errs []error
	for name, data := range files {
		if old, ok := a.streamWritten[name]; ok && string(old) == string(data) {
			continue
		}
		delete(a.streamWritten, name)
		if err := writeFileAtomic(filepath.Join(a.opts.streamDir(), name), data, 0o644); err != nil {
			errs = append(errs, err)
			continue
		}
		a.streamWritten[name] = data
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrStreamFiles, err)
	}
	return nil
}

// removeStaleStreamFiles removes the files of listeners nginx no longer
// has (after a reload, or those of an earlier run).
func (a *Applier) removeStaleStreamFiles(keep map[string][]byte) {
	entries, err := os.ReadDir(a.opts.streamDir())
	if err != nil {
		a.log.Warn("reading the stream endpoint files", "err", err)
		return
	}
	for _, e := range entries {
		if _, ok := keep[e.Name()]; ok {
			continue
		}
		if err := os.Remove(filepath.Join(a.opts.streamDir(), e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
			a.log.Warn("removing a stream endpoint file", "file", e.Name(), "err", err)
		}
	}
	maps.DeleteFunc(a.streamWritten, func(name string, _ []byte) bool { _, ok := keep[name]; return !ok })
}

// splitEndpoint parses an endpoint of the files: an IP address and a port.
func splitEndpoint(e string) (netip.Addr, int, error) {
	ap, err := netip.ParseAddrPort(e)
	if err != nil || ap.Port() == 0 || ap.Addr().Zone() != "" {
		return netip.Addr{}, 0, fmt.Errorf("not an endpoint: %q", e)
	}
	return ap.Addr(), int(ap.Port()), nil
}
