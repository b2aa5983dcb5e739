package nginx

import (
	"fmt"
	"math/bits"
	"net"
	"strconv"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/model"
)

// view is what the template sees: only validated, pre-rendered text.
type view struct {
	Checksum       string
	LuaChecksum    string
	LuaNoEndpoints string
	MaxTries       int

	ModulesDir, Dir, LuaDir, SystemLuaDir string
	User, Group                           string
	WorkerProcesses                       string
	WorkerShutdownTimeout                 string
	WorkerConnections                     int
	ErrorLogLevel                         string
	AccessLog                             bool
	BackendsDictSize                      string
	CertificatesDictSize                  string
	MaxDeltaSize                          string
	StatusPort                            int

	ServerNamesHashMaxSize    int
	ServerNamesHashBucketSize int
	UseForwardedHeaders       bool
	UpstreamKeepalive         int
	GlobalDirectives          []string

	Servers []viewServer

	TestHTTPSnippet string
	TestInitLua     string
}

type viewServer struct {
	Name      string
	Listen    []string
	Locations []viewLocation
}

type viewLocation struct {
	Match      string   // "= /p", "/p/" or "/"
	Backend    string   // "" answers 404
	Redirect   string   // 308 target for plain HTTP, "" for none
	Directives []string // validated per-location directives, rewrite last
	Pass       string   // proxy_pass or grpc_pass
}

// newView validates cfg against o and builds the template input.
func newView(o *Options, cfg *model.Configuration) (*view, error) {
	v := &view{
		MaxTries:              o.MaxTries,
		ModulesDir:            o.ModulesDir,
		Dir:                   o.Dir,
		LuaDir:                o.LuaDir,
		SystemLuaDir:          o.SystemLuaDir,
		User:                  o.User,
		Group:                 o.Group,
		WorkerProcesses:       "auto",
		WorkerShutdownTimeout: strconv.Itoa(int(o.WorkerShutdownTimeout.Seconds())) + "s",
		WorkerConnections:     o.WorkerConnections,
		ErrorLogLevel:         o.ErrorLogLevel,
		AccessLog:             !o.DisableAccessLog,
		StatusPort:            o.StatusPort,
		TestHTTPSnippet:       o.testHTTPSnippet,
		TestInitLua:           o.testInitLua,
	}
	if o.WorkerProcesses > 0 {
		v.WorkerProcesses = strconv.Itoa(o.WorkerProcesses)
	}
	// Options were validated by Complete; sizes cannot fail here.
	v.BackendsDictSize, _ = nginxSize(o.BackendsDictSize)
	v.CertificatesDictSize, _ = nginxSize(o.CertificatesDictSize)
	v.MaxDeltaSize, _ = nginxSize(o.MaxDeltaSize)

	sum, err := checksum(cfg.Checksum)
	if err != nil {
		return nil, err
	}
	v.Checksum, v.LuaChecksum = sum, luaString(sum)
	v.LuaNoEndpoints = luaString("unix:" + o.noEndpointsSocket())
	if err := v.setGlobal(cfg.Global); err != nil {
		return nil, fmt.Errorf("global: %w", err)
	}
	if err := v.setServers(o, cfg); err != nil {
		return nil, err
	}
	return v, nil
}

func (v *view) setGlobal(g model.Global) error {
	v.UseForwardedHeaders = g.UseForwardedHeaders
	if g.UpstreamKeepalive < 0 || g.UpstreamKeepalive > 100000 {
		return invalid("upstream keepalive", strconv.Itoa(g.UpstreamKeepalive))
	}
	v.UpstreamKeepalive = g.UpstreamKeepalive
	timeouts, err := timeoutDirectives([]string{"proxy", "grpc"}, g.ProxyConnectTimeout, g.ProxyReadTimeout, g.ProxySendTimeout)
	if err != nil {
		return err
	}
	v.GlobalDirectives = timeouts
	if g.ProxyBodySize != "" {
		s, err := nginxSize(g.ProxyBodySize)
		if err != nil {
			return err
		}
		v.GlobalDirectives = append(v.GlobalDirectives, "client_max_body_size "+s)
	}
	return nil
}

// timeoutDirectives renders the non-zero timeouts for each module prefix.
func timeoutDirectives(prefixes []string, connect, read, send int) ([]string, error) {
	var out []string
	for _, t := range []struct {
		name string
		v    int
	}{{"connect", connect}, {"read", read}, {"send", send}} {
		if t.v == 0 {
			continue
		}
		s, err := seconds(t.v)
		if err != nil {
			return nil, fmt.Errorf("%s timeout: %w", t.name, err)
		}
		for _, p := range prefixes {
			out = append(out, p+"_"+t.name+"_timeout "+s)
		}
	}
	return out, nil
}

func (v *view) setServers(o *Options, cfg *model.Configuration) error {
	listen, listenDefault := listenLines(o)
	redirect := "https://$host$request_uri"
	if o.HTTPSPort != 443 {
		redirect = "https://$host:" + strconv.Itoa(o.HTTPSPort) + "$request_uri"
	}
	var defaultBackend string
	if cfg.DefaultBackend != "" {
		b, err := backendName(cfg.DefaultBackend)
		if err != nil {
			return fmt.Errorf("default backend: %w", err)
		}
		defaultBackend = b
	}
	servers := cfg.Servers
	if !hasDefaultServer(servers) {
		servers = append([]model.Server{{Hostname: "_"}}, servers...)
	}
	v.Servers = make([]viewServer, 0, len(servers))
	seen := make(map[string]bool, len(servers))
	maxLen, exact := 0, 0
	for i := range servers {
		s := &servers[i]
		if seen[s.Hostname] {
			return fmt.Errorf("%w: duplicate server %q", ErrInvalidValue, s.Hostname)
		}
		seen[s.Hostname] = true
		vs, err := buildServer(s, defaultBackend, redirect)
		if err != nil {
			return fmt.Errorf("server %q: %w", s.Hostname, err)
		}
		vs.Listen = listen
		if s.Hostname == "_" {
			vs.Listen = listenDefault
		} else if !strings.HasPrefix(vs.Name, `"~`) {
			maxLen, exact = max(maxLen, len(s.Hostname)), exact+1
		}
		v.Servers = append(v.Servers, vs)
	}
	v.ServerNamesHashBucketSize, v.ServerNamesHashMaxSize = serverNamesHash(maxLen, exact, cfg.Global.ServerNamesHashMaxKB)
	return nil
}

func hasDefaultServer(servers []model.Server) bool {
	for i := range servers {
		if servers[i].Hostname == "_" {
			return true
		}
	}
	return false
}

// serverNamesHash sizes nginx's server name hash: a bucket holds at least two
// of the longest names (an element is a pointer plus the name aligned to 8),
// and the table may grow to twice the next power of two of the name count.
func serverNamesHash(maxLen, names int, override int64) (bucket, maxSize int) {
	elt := 8 + (maxLen+2+7)&^7
	bucket = max(64, nextPow2(2*elt+8))
	maxSize = max(1024, 2*nextPow2(names))
	if override > 0 && override < 1<<24 && int(override) > maxSize {
		maxSize = int(override)
	}
	return bucket, maxSize
}

func nextPow2(n int) int {
	if n <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(n-1))
}

// listenLines returns the listen arguments of ordinary servers and of the
// default server.
func listenLines(o *Options) (listen, listenDefault []string) {
	var addrs []string
	switch {
	case o.ListenAddress != "":
		addrs = []string{net.JoinHostPort(o.ListenAddress, "%d")}
	case o.IPv6:
		addrs = []string{"%d", "[::]:%d"}
	default:
		addrs = []string{"%d"}
	}
	// Every server has its own TLS context: ssl_certificate_by_lua runs in
	// the context of the server the SNI name selects.
	for _, a := range addrs {
		http, https := fmt.Sprintf(a, o.HTTPPort), fmt.Sprintf(a, o.HTTPSPort)+" ssl http2"
		listen = append(listen, http, https)
		listenDefault = append(listenDefault, http+" default_server", https+" default_server")
	}
	return listen, listenDefault
}

func buildServer(s *model.Server, defaultBackend, redirect string) (viewServer, error) {
	name, err := serverName(s.Hostname)
	if err != nil {
		return viewServer{}, err
	}
	vs := viewServer{Name: name, Locations: make([]viewLocation, 0, 2*len(s.Locations)+1)}
	exact := make(map[string]bool, len(s.Locations))
	for _, l := range s.Locations {
		if l.PathType == model.PathExact {
			exact[l.Path] = true
		}
	}
	seen := make(map[string]bool, 2*len(s.Locations)+1)
	add := func(match string, l viewLocation) {
		if !seen[match] {
			seen[match] = true
			l.Match = match
			vs.Locations = append(vs.Locations, l)
		}
	}
	for i := range s.Locations {
		if err := addLocation(s, &s.Locations[i], exact, redirect, add); err != nil {
			return viewServer{}, err
		}
	}
	if !seen["/"] {
		l := viewLocation{Backend: defaultBackend, Pass: "proxy_pass http://upstream_balancer"}
		if s.TLS && s.SSLRedirect {
			l.Redirect = redirect
		}
		add("/", l)
	}
	return vs, nil
}

// addLocation expands one Location: Exact -> "= /p"; Prefix -> "= /p" (unless
// an Exact has that path) and "/p/"; Prefix "/" -> "/".
func addLocation(s *model.Server, l *model.Location, exact map[string]bool, redirect string, add func(string, viewLocation)) error {
	path, err := locationPath(l.Path)
	if err != nil {
		return err
	}
	vl, target, err := buildLocation(s, l, redirect)
	if err != nil {
		return fmt.Errorf("location %q: %w", l.Path, err)
	}
	switch l.PathType {
	case model.PathExact:
		vl.Directives = append(vl.Directives, exactRewrite(target)...)
		add("= "+path, vl)
	case model.PathPrefix:
		prefix := strings.TrimRight(path, "/")
		if prefix == "" {
			vl.Directives = append(vl.Directives, prefixRewrite("", target)...)
			add("/", vl)
			return nil
		}
		sub := vl
		sub.Directives = append(append([]string(nil), vl.Directives...), prefixRewrite(prefix, target)...)
		if !exact[prefix] {
			vl.Directives = append(vl.Directives, exactRewrite(target)...)
			add("= "+prefix, vl)
		}
		add(prefix+"/", sub)
	default:
		return fmt.Errorf("%w: path type %q of %q", ErrInvalidValue, l.PathType, l.Path)
	}
	return nil
}

// buildLocation renders everything of a location but its match and rewrite,
// and returns the validated rewrite target ("" for none).
func buildLocation(s *model.Server, l *model.Location, redirect string) (viewLocation, string, error) {
	var vl viewLocation
	if l.Backend != "" {
		b, err := backendName(l.Backend)
		if err != nil {
			return vl, "", err
		}
		vl.Backend = b
	}
	pass, err := backendProtocol(l.Settings.BackendProtocol)
	if err != nil {
		return vl, "", err
	}
	vl.Pass = pass
	redirectOn := s.SSLRedirect
	if l.Settings.SSLRedirect != nil {
		redirectOn = *l.Settings.SSLRedirect
	}
	if s.TLS && redirectOn {
		vl.Redirect = redirect
	}
	vl.Directives, err = settingsDirectives(&l.Settings, strings.HasPrefix(pass, "grpc"))
	if err != nil {
		return vl, "", err
	}
	var target string
	if l.Settings.RewriteTarget != "" {
		if target, err = rewriteTarget(l.Settings.RewriteTarget); err != nil {
			return vl, "", err
		}
	}
	return vl, target, nil
}

func settingsDirectives(st *model.LocationSettings, grpc bool) ([]string, error) {
	prefix := "proxy"
	if grpc {
		prefix = "grpc"
	}
	out, err := timeoutDirectives([]string{prefix}, st.ProxyConnectTimeout, st.ProxyReadTimeout, st.ProxySendTimeout)
	if err != nil {
		return nil, err
	}
	if st.ProxyBodySize != "" {
		s, err := nginxSize(st.ProxyBodySize)
		if err != nil {
			return nil, fmt.Errorf("proxy body size: %w", err)
		}
		out = append(out, "client_max_body_size "+s)
	}
	if len(st.AllowSourceRange) > 0 {
		for _, c := range st.AllowSourceRange {
			r, err := cidr(c)
			if err != nil {
				return nil, fmt.Errorf("allow source range: %w", err)
			}
			out = append(out, "allow "+r)
		}
		out = append(out, "deny all")
	}
	return out, nil
}

// exactRewrite rewrites an exactly matched path to the validated target.
func exactRewrite(target string) []string {
	if target == "" {
		return nil
	}
	return []string{`rewrite ^ "` + target + `" break`}
}

// prefixRewrite replaces the matched prefix with the validated target, keeping the
// rest of the path: /p/rest -> <target>/rest.
func prefixRewrite(prefix, target string) []string {
	if target == "" {
		return nil
	}
	return []string{`rewrite "^` + regexQuote(prefix) + `(/.*)$" "` + strings.TrimRight(target, "/") + `$1" break`}
}
