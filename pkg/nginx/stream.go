package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The stream block: TCP and UDP services (config.Configuration.L4), the
// TCP, UDP and TLS passthrough listeners of Gateways (Configuration.Streams:
// a TLS one reads the SNI name with ssl_preread and proxies to $l4_sni)
// and SSL passthrough (Options.EnableSSLPassthrough) on nginx's stream module and
// its njs module (Debian's libnginx-mod-stream and libnginx-mod-stream-js;
// there is no stream-lua). nginx.conf holds the listeners only: a port,
// its protocol and its PROXY protocol options. Every listener's server
// proxies to $l4_target, which lua/l4.js sets per connection from the
// endpoint file of the listener (streamfiles.go), so that endpoint changes
// and passthrough hosts never reload nginx and no value of the cluster
// reaches nginx.conf.
//
// With SSL passthrough, the public HTTPS listeners are a stream server
// with ssl_preread: l4.js sends a connection whose SNI name is a
// passthrough host to the passthrough hop (a stream server on a unix
// socket that proxies to the host's endpoint, without a PROXY header), and
// every other one to the HTTPS server's internal listener (a unix socket),
// both with a PROXY header that carries the client address.

// l4Listener is what nginx.conf holds of an L4Service: a change of any of
// it reloads nginx.
type l4Listener struct {
	Protocol    config.L4Protocol
	Port        int
	DecodeProxy bool
	EncodeProxy bool
}

// listenersOf returns the listeners of l4 and of the Gateway streams
// (one per protocol and port), sorted by protocol and port.
func listenersOf(l4 []config.L4Service, streams []config.Stream) []l4Listener {
	out := make([]l4Listener, 0, len(l4)+len(streams))
	for _, s := range l4 {
		out = append(out, l4Listener{Protocol: s.Protocol, Port: s.Port, DecodeProxy: s.DecodeProxy, EncodeProxy: s.EncodeProxy})
	}
	seen := map[l4Listener]bool{}
	for _, s := range streams {
		l := l4Listener{Protocol: s.Protocol, Port: s.Port}
		if !seen[l] { // a TLS port has a Stream per hostname
			seen[l] = true
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b l4Listener) int {
		return cmp.Or(cmp.Compare(a.Protocol, b.Protocol), cmp.Compare(a.Port, b.Port))
	})
	return out
}

// streamView is the stream block of the template; nil renders none.
type streamView struct {
	// Module is lua/l4.js; FilesDir holds the endpoint files; Closed and
	// ClosedUDP are the sockets of the servers that close at once.
	Module, FilesDir, Closed, ClosedUDP string
	// LogFormat is the quoted log_format; AccessLogPath "" is off.
	LogFormat, AccessLogPath string
	// ConnectTimeout and ProxyTimeout: proxy_connect_timeout and
	// proxy_timeout.
	ConnectTimeout, ProxyTimeout, ProxyProtocolTimeout string
	Servers                                            []streamServer
	Passthrough                                        *passthroughView
}

// streamServer is the server of one L4 listener.
type streamServer struct {
	Comment string
	Listen  []string
	// RealIPFrom: the proxies whose PROXY header sets the client address
	// (listeners that decode one).
	RealIPFrom []string
	// UDP servers expect Responses datagrams per datagram.
	UDP       bool
	Responses int
	// ProxyProtocol sends a PROXY header to the backend.
	ProxyProtocol bool
	// SNI: a TLS passthrough listener of a Gateway, which reads the SNI
	// name (ssl_preread) and proxies to $l4_sni.
	SNI bool
}

// passthroughView is the public HTTPS server of SSL passthrough and its
// hop: Listen are the public HTTPS listeners, RealIPFrom the proxies
// trusted to send a PROXY header to them (use-proxy-protocol), HTTPS and
// Hop the unix sockets of the HTTPS server and the passthrough hop.
type passthroughView struct {
	Listen     []string
	RealIPFrom []string
	HTTPS, Hop string
}

// setStream renders the stream block when there are L4 listeners or SSL
// passthrough is on, and the HTTPS server's internal listener with it.
func (v *view) setStream(o *Options, g *config.Global, n *config.NginxSettings, listeners []l4Listener) error {
	if len(listeners) == 0 && !o.EnableSSLPassthrough {
		return nil
	}
	s := &streamView{
		Module: o.LuaDir + "/l4.js", FilesDir: o.streamDir(),
		Closed: o.closedSocket(), ClosedUDP: o.closedUDPSocket(),
	}
	if err := s.setSettings(o, g, n); err != nil {
		return err
	}
	trusted, err := streamTrusted(n)
	if err != nil {
		return err
	}
	if err := checkListeners(o, listeners); err != nil {
		return err
	}
	for _, l := range listeners {
		s.Servers = append(s.Servers, streamServerOf(o, l, trusted, n.ProxyStreamResponses))
	}
	if o.EnableSSLPassthrough {
		p := &passthroughView{HTTPS: o.httpsSocket(), Hop: o.passthroughSocket()}
		suffix := ""
		if n.UseProxyProtocol {
			suffix, p.RealIPFrom = " proxy_protocol", trusted
		}
		for _, a := range listenAddrs(o, o.HTTPSPort) {
			p.Listen = append(p.Listen, a+suffix)
		}
		s.Passthrough = p
		v.setInternalHTTPS(o, n.UseHTTP2)
	}
	v.Stream = s
	return nil
}

// setSettings validates and renders the stream settings of the ConfigMap.
func (s *streamView) setSettings(o *Options, g *config.Global, n *config.NginxSettings) error {
	var d directives
	connect := g.ProxyConnectTimeout
	if connect == 0 {
		connect = config.DefaultGlobal().ProxyConnectTimeout
	}
	timeout := n.ProxyStreamTimeout
	if timeout == 0 {
		timeout = config.DefaultGlobal().Nginx.ProxyStreamTimeout
	}
	s.ConnectTimeout = d.seconds("proxy connect timeout", connect, 1)
	s.ProxyTimeout = d.seconds("proxy stream timeout", timeout, 1)
	s.ProxyProtocolTimeout = d.seconds("proxy protocol header timeout",
		cmp.Or(n.ProxyProtocolHeaderTimeout, config.DefaultGlobal().Nginx.ProxyProtocolHeaderTimeout), 1)
	d.count("proxy stream responses", n.ProxyStreamResponses, 0)
	if d.err != nil {
		return d.err
	}
	format := n.LogFormatStream
	if format == "" {
		format = config.DefaultStreamLogFormat
	}
	f, err := logFormat(format, "")
	if err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	s.LogFormat = f
	path, err := accessLogPath(n.StreamAccessLogPath)
	if err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	if !o.DisableAccessLog && !n.DisableAccessLog {
		s.AccessLogPath = path
	}
	return nil
}

// streamTrusted returns the proxies trusted to send a PROXY header:
// proxy-real-ip-cidr, or every peer when it is empty (a listener that
// decodes PROXY refuses connections without one), as use-proxy-protocol.
func streamTrusted(n *config.NginxSettings) ([]string, error) {
	trusted, err := cidrList("proxy real ip cidr", n.ProxyRealIPCIDR)
	if err != nil {
		return nil, err
	}
	if len(trusted) == 0 {
		trusted = []string{"0.0.0.0/0", "::/0"}
	}
	return trusted, nil
}

// checkListeners validates the listeners (pkg/model checked them first):
// ports 1 to 65535, one listener per protocol and port, none on a TCP port
// of the HTTP server, PROXY options on TCP only.
func checkListeners(o *Options, listeners []l4Listener) error {
	seen := map[l4Listener]bool{}
	for _, l := range listeners {
		what := fmt.Sprintf("%s port", l.Protocol)
		switch {
		case l.Protocol != config.L4TCP && l.Protocol != config.L4UDP && l.Protocol != config.L4TLS:
			return invalid("stream protocol", string(l.Protocol))
		case l.Port < 1 || l.Port > 65535:
			return invalid(what, strconv.Itoa(l.Port))
		case l.Protocol != config.L4UDP && (l.Port == o.HTTPPort || l.Port == o.HTTPSPort || l.Port == o.StatusPort):
			return invalid(what+" (used by the HTTP server)", strconv.Itoa(l.Port))
		case l.Protocol != config.L4TCP && (l.DecodeProxy || l.EncodeProxy):
			return invalid(what+" with PROXY protocol", strconv.Itoa(l.Port))
		}
		key := l4Listener{Protocol: transport(l.Protocol), Port: l.Port}
		if seen[key] {
			return invalid(what+" (twice)", strconv.Itoa(l.Port))
		}
		seen[key] = true
	}
	return nil
}

// transport is the socket type of a listener of p: a TLS passthrough
// listener is a TCP one.
func transport(p config.L4Protocol) config.L4Protocol {
	if p == config.L4TLS {
		return config.L4TCP
	}
	return p
}

// streamServerOf returns the server of l.
func streamServerOf(o *Options, l l4Listener, trusted []string, responses int) streamServer {
	s := streamServer{
		Comment:       fmt.Sprintf("%s %d", l.Protocol, l.Port),
		UDP:           l.Protocol == config.L4UDP,
		Responses:     responses,
		ProxyProtocol: l.EncodeProxy,
		SNI:           l.Protocol == config.L4TLS,
	}
	suffix := ""
	switch {
	case s.UDP:
		suffix = " udp"
	case l.DecodeProxy:
		suffix, s.RealIPFrom = " proxy_protocol", trusted
	}
	for _, a := range listenAddrs(o, l.Port) {
		s.Listen = append(s.Listen, a+suffix)
	}
	return s
}

// setInternalHTTPS moves the public HTTPS listeners of the HTTP server to
// the stream block and adds its internal listener, a unix socket that
// takes the PROXY header of the stream server: a server of its own (the
// same body), whose client address is the PROXY header's, whatever the
// HTTP listeners take it from, and whose $pass_server_port is the public
// HTTPS port.
func (v *view) setInternalHTTPS(o *Options, http2 bool) {
	var plain []string
	for _, l := range v.Listen {
		if !containsWord(l, "ssl") {
			plain = append(plain, l)
		}
	}
	v.Listen = plain
	in := *v
	ssl := " ssl"
	if http2 {
		ssl = " ssl http2"
	}
	in.Listen = []string{"unix:" + o.httpsSocket() + ssl + " proxy_protocol default_server"}
	in.ServerRealIP = &realIP{Header: "proxy_protocol", From: []string{"unix:"}}
	v.InternalHTTPS = &in
}

func containsWord(s, w string) bool {
	return slices.Contains(strings.Fields(s), w)
}
