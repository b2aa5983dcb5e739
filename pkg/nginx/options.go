package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"
)

// Defaults applied by Options.Complete.
const (
	DefaultHTTPPort              = 80
	DefaultHTTPSPort             = 443
	DefaultStatusPort            = 10246
	DefaultWorkerConnections     = 16384
	DefaultWorkerShutdownTimeout = 240 * time.Second
	DefaultModulesDir            = "/usr/lib/nginx/modules"
	// DefaultModSecurityCRSSetup and DefaultModSecurityCRSRules are
	// Debian's OWASP Core Rule Set (modsecurity-crs).
	DefaultModSecurityCRSSetup = "/etc/modsecurity/crs/crs-setup.conf"
	DefaultModSecurityCRSRules = "/usr/share/modsecurity-crs/rules"
	// DefaultGeoIPDir is where ingress-nginx reads its MaxMind databases.
	DefaultGeoIPDir             = "/etc/ingress-controller/geoip"
	DefaultSystemLuaDir         = "/usr/share/lua/5.1"
	DefaultErrorLogLevel        = "notice"
	DefaultBackendsDictSize     = config.Size("64m")
	DefaultCertificatesDictSize = config.Size("16m")
	DefaultRoutesDictSize       = config.Size("64m")
	DefaultLimitsDictSize       = config.Size("16m")
	DefaultBodySizeCeiling      = config.Size("0")
	DefaultRegexCacheEntries    = 8192
	DefaultMaxTries             = 3
	DefaultReloadTimeout        = 30 * time.Second
	DefaultStartTimeout         = 30 * time.Second
	DefaultRequestTimeout       = 10 * time.Second
	DefaultMaxDeltaSize         = config.Size("64m")
)

// maxDirLen keeps the unix socket of the "no endpoints" server (Dir +
// "/run/no-endpoints.sock") within the 108 bytes of sun_path.
const maxDirLen = 80

// DefaultSystemCAFile is Debian's bundle of the system's CA certificates
// (package ca-certificates, in the image).
const DefaultSystemCAFile = "/etc/ssl/certs/ca-certificates.crt"

// Options configure the nginx that ingress-sync runs. The zero value is not
// usable: call Complete (the constructors do) to apply defaults and validate.
type Options struct {
	// Dir is the prefix of everything nginx writes or reads that is ours:
	// nginx.conf, the pid file, logs/, tmp/ (all *_temp_path), certs/ (the
	// placeholder certificate), run/ (unix sockets) and lua/ (the embedded Lua
	// modules, unless LuaDir is set). Required, absolute.
	Dir string
	// LuaDir holds the Lua modules. "" installs the embedded copy in Dir/lua.
	LuaDir string
	// SystemLuaDir holds lua-resty-core and friends (Debian: /usr/share/lua/5.1).
	SystemLuaDir string
	// NginxBinary is the nginx executable; "" looks up "nginx" in PATH and
	// then /usr/sbin/nginx.
	NginxBinary string
	// ModulesDir holds ndk_http_module.so and ngx_http_lua_module.so.
	ModulesDir string
	// ModSecurityCRSSetup is the Core Rule Set's crs-setup.conf and
	// ModSecurityCRSRules the directory of its rules (*.conf), which the
	// rules files of ModSecurity profiles with the CRS include
	// (modsecurity.go). Defaults DefaultModSecurityCRSSetup and
	// DefaultModSecurityCRSRules.
	ModSecurityCRSSetup, ModSecurityCRSRules string
	// GeoIPDir holds the MaxMind databases of use-geoip2, under
	// ingress-nginx's file names (GeoLite2-City.mmdb...); it need not
	// exist. Default DefaultGeoIPDir.
	GeoIPDir string
	// SystemCAFile is the bundle of the system's CA certificates, which the
	// backend TLS profiles of BackendTLSPolicies with
	// wellKnownCACertificates System trust. Default DefaultSystemCAFile.
	SystemCAFile string

	// ListenAddress is the IP the HTTP and HTTPS listeners bind; "" binds
	// every IPv4 address (and every IPv6 address when IPv6 is set).
	ListenAddress string
	// IPv6 adds [::] listeners when ListenAddress is "".
	IPv6 bool
	// HTTPPort, HTTPSPort: the public ports. StatusPort: the status and Lua
	// configuration server, always bound to 127.0.0.1.
	HTTPPort   int
	HTTPSPort  int
	StatusPort int

	// WorkerProcesses: 0 means "auto" (one per core).
	WorkerProcesses   int
	WorkerConnections int
	// WorkerShutdownTimeout bounds how long old workers drain after a reload
	// and how long a graceful stop waits before killing nginx.
	WorkerShutdownTimeout time.Duration
	// User and Group run the workers when the master runs as root; "" keeps
	// nginx's built-in default (nobody/nogroup on Debian).
	User  string
	Group string
	// ErrorLogLevel is the level of nginx's error log, which goes to its
	// stderr: Process logs each line through Logger.
	ErrorLogLevel string
	// DisableAccessLog turns the access log off, whatever the ConfigMap's
	// disable-access-log and access-log-path say.
	DisableAccessLog bool

	// BackendsDictSize and CertificatesDictSize size the Lua shared dicts
	// that hold the dynamic state. Changing them loses that state on reload.
	BackendsDictSize     config.Size
	CertificatesDictSize config.Size
	// RoutesDictSize sizes the shared dict of the route tables (about
	// 400 bytes per Ingress path; see docs/deploy.md).
	RoutesDictSize config.Size
	// LimitsDictSize sizes the shared dict of the rate and connection
	// limits (lua/limit.lua: about 128 bytes, estimated, per client
	// address, Ingress and kind of limit); when full, the least recently
	// used entries are dropped, and a request that still finds no room
	// answers the limit's status code.
	LimitsDictSize config.Size
	// AuthCacheDictSize sizes the shared dict of the external auth cache
	// (auth-cache-key); AuthTimeout bounds each auth request (connect: at
	// most 5s of it); Resolvers resolve the host names of auth URLs (none:
	// only addresses work). See extauth.go.
	AuthCacheDictSize config.Size
	AuthTimeout       time.Duration
	Resolvers         []string
	// Metrics: the traffic metrics of lua/metrics.lua (see metrics.go).
	Metrics MetricsOptions
	// EnableSSLPassthrough (--enable-ssl-passthrough) moves the public
	// HTTPS listeners into a stream server that sends the TLS connections
	// of passthrough hosts to their backends unterminated and every other
	// one to the HTTPS server's internal listener (see stream.go).
	EnableSSLPassthrough bool
	// BodySizeCeiling is nginx's client_max_body_size, above every route's
	// own limit (proxy-body-size), which router.lua enforces: "0" (the
	// default) leaves it to the routes, a size caps every route at it.
	BodySizeCeiling config.Size
	// RegexCacheEntries is lua_regex_cache_max_entries: compiled regex
	// paths kept per worker. More regex paths than this still work, but are
	// compiled on every request.
	RegexCacheEntries int
	// MaxDeltaSize is the largest body the Lua configuration endpoint takes.
	MaxDeltaSize config.Size
	// MaxTries is proxy_next_upstream_tries: attempts per request across
	// endpoints (on connection errors and timeouts).
	MaxTries int

	// ReloadTimeout bounds `nginx -t` and, separately, the wait for new
	// workers after SIGHUP (nginx.conf holds global settings only, so
	// neither grows with the number of Ingresses).
	ReloadTimeout time.Duration
	// StartTimeout bounds the wait for a started nginx to answer.
	StartTimeout time.Duration
	// RequestTimeout bounds every call to the Lua endpoints.
	RequestTimeout time.Duration

	// Logger receives the package's logs; nil means slog.Default().
	Logger *slog.Logger
	// Stdout receives nginx's stdout, where the access log goes unless the
	// ConfigMap's access-log-path names a file; nil means os.Stdout. An
	// *os.File is handed to nginx as it is (no copy through this process).
	Stdout io.Writer

	// Test hooks, settable only from this package's tests: raw text added at
	// the end of the http block and of init_by_lua_block.
	testHTTPSnippet string
	testInitLua     string
}

var (
	nameRe     = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)
	logLevelRe = regexp.MustCompile(`^(debug|info|notice|warn|error|crit|alert|emerg)$`)
)

// Complete returns a copy of o with defaults applied, or an error wrapping
// ErrInvalidOptions that lists every invalid field.
func (o Options) Complete() (Options, error) {
	o.applyDefaults()
	if errs := o.validate(); len(errs) > 0 {
		return Options{}, fmt.Errorf("%w: %w", ErrInvalidOptions, errors.Join(errs...))
	}
	return o, nil
}

func (o *Options) applyDefaults() {
	setDefault(&o.HTTPPort, DefaultHTTPPort)
	setDefault(&o.HTTPSPort, DefaultHTTPSPort)
	setDefault(&o.StatusPort, DefaultStatusPort)
	setDefault(&o.WorkerConnections, DefaultWorkerConnections)
	setDefault(&o.WorkerShutdownTimeout, DefaultWorkerShutdownTimeout)
	setDefault(&o.ModulesDir, DefaultModulesDir)
	setDefault(&o.ModSecurityCRSSetup, DefaultModSecurityCRSSetup)
	setDefault(&o.ModSecurityCRSRules, DefaultModSecurityCRSRules)
	setDefault(&o.GeoIPDir, DefaultGeoIPDir)
	setDefault(&o.SystemCAFile, DefaultSystemCAFile)
	setDefault(&o.SystemLuaDir, DefaultSystemLuaDir)
	setDefault(&o.ErrorLogLevel, DefaultErrorLogLevel)
	setDefault(&o.BackendsDictSize, DefaultBackendsDictSize)
	setDefault(&o.CertificatesDictSize, DefaultCertificatesDictSize)
	setDefault(&o.RoutesDictSize, DefaultRoutesDictSize)
	setDefault(&o.LimitsDictSize, DefaultLimitsDictSize)
	o.extAuthDefaults()
	o.Metrics.defaults()
	setDefault(&o.BodySizeCeiling, DefaultBodySizeCeiling)
	setDefault(&o.RegexCacheEntries, DefaultRegexCacheEntries)
	setDefault(&o.MaxDeltaSize, DefaultMaxDeltaSize)
	setDefault(&o.MaxTries, DefaultMaxTries)
	setDefault(&o.ReloadTimeout, DefaultReloadTimeout)
	setDefault(&o.StartTimeout, DefaultStartTimeout)
	setDefault(&o.RequestTimeout, DefaultRequestTimeout)
	if o.Dir != "" {
		o.Dir = filepath.Clean(o.Dir)
		if o.LuaDir == "" {
			o.LuaDir = filepath.Join(o.Dir, "lua")
		}
	}
	if o.LuaDir != "" {
		o.LuaDir = filepath.Clean(o.LuaDir)
	}
	if o.NginxBinary == "" {
		o.NginxBinary = findNginx()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

func findNginx() string {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	return "/usr/sbin/nginx"
}

func (o *Options) validate() []error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(checkDir("Dir", o.Dir))
	if len(o.Dir) > maxDirLen {
		add(fmt.Errorf("Dir %q is longer than %d bytes (unix socket paths are limited)", o.Dir, maxDirLen))
	}
	add(checkDir("LuaDir", o.LuaDir))
	add(checkDir("SystemLuaDir", o.SystemLuaDir))
	add(checkDir("ModulesDir", o.ModulesDir))
	add(checkDir("ModSecurityCRSSetup", o.ModSecurityCRSSetup))
	add(checkDir("ModSecurityCRSRules", o.ModSecurityCRSRules))
	add(checkDir("GeoIPDir", o.GeoIPDir))
	add(checkDir("SystemCAFile", o.SystemCAFile))
	add(checkDir("NginxBinary", o.NginxBinary))
	if o.ListenAddress != "" {
		if _, err := netip.ParseAddr(o.ListenAddress); err != nil {
			add(fmt.Errorf("ListenAddress %q is not an IP address", o.ListenAddress))
		}
	}
	add(checkPorts(o.HTTPPort, o.HTTPSPort, o.StatusPort))
	add(checkRange("WorkerProcesses", o.WorkerProcesses, 0, 1024))
	add(checkRange("WorkerConnections", o.WorkerConnections, 16, 1<<20))
	add(checkRange("MaxTries", o.MaxTries, 1, 100))
	add(checkDuration("WorkerShutdownTimeout", o.WorkerShutdownTimeout, time.Second))
	add(checkDuration("ReloadTimeout", o.ReloadTimeout, time.Millisecond))
	add(checkDuration("StartTimeout", o.StartTimeout, time.Millisecond))
	add(checkDuration("RequestTimeout", o.RequestTimeout, time.Millisecond))
	add(checkUser(o.User, o.Group))
	if !logLevelRe.MatchString(o.ErrorLogLevel) {
		add(fmt.Errorf("ErrorLogLevel %q is not an nginx log level", o.ErrorLogLevel))
	}
	for _, s := range []struct {
		name string
		v    config.Size
	}{{"BackendsDictSize", o.BackendsDictSize}, {"CertificatesDictSize", o.CertificatesDictSize},
		{"RoutesDictSize", o.RoutesDictSize}, {"LimitsDictSize", o.LimitsDictSize}, {"MaxDeltaSize", o.MaxDeltaSize}} {
		if _, err := nginxSize(s.v); err != nil || s.v == "0" {
			add(fmt.Errorf("%s %q is not a positive nginx size", s.name, s.v))
		}
	}
	if _, err := nginxSize(o.BodySizeCeiling); err != nil {
		add(fmt.Errorf("BodySizeCeiling %q is not an nginx size", o.BodySizeCeiling))
	}
	add(checkRange("RegexCacheEntries", o.RegexCacheEntries, 16, 1<<20))
	errs = append(errs, o.validateExtAuth()...)
	errs = append(errs, o.Metrics.validate()...)
	return errs
}

func checkDir(field, p string) error {
	if p == "" || !filepath.IsAbs(p) {
		return fmt.Errorf("%s %q must be an absolute path", field, p)
	}
	if _, err := filePath(p); err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}

func checkPorts(http, https, status int) error {
	var errs []error
	for _, p := range []struct {
		name string
		v    int
	}{{"HTTPPort", http}, {"HTTPSPort", https}, {"StatusPort", status}} {
		errs = append(errs, checkRange(p.name, p.v, 1, 65535))
	}
	if http == https || http == status || https == status {
		errs = append(errs, fmt.Errorf("HTTPPort %d, HTTPSPort %d and StatusPort %d must differ", http, https, status))
	}
	return errors.Join(errs...)
}

func checkRange(field string, v, lo, hi int) error {
	if v < lo || v > hi {
		return fmt.Errorf("%s %d is out of range [%d, %d]", field, v, lo, hi)
	}
	return nil
}

func checkDuration(field string, d, min time.Duration) error {
	if d < min {
		return fmt.Errorf("%s %s is shorter than %s", field, d, min)
	}
	return nil
}

func checkUser(user, group string) error {
	if user == "" && group == "" {
		return nil
	}
	if !nameRe.MatchString(user) || !nameRe.MatchString(group) {
		return fmt.Errorf("User %q and Group %q must both be set to valid user and group names", user, group)
	}
	return nil
}

// confPath is the nginx.conf that nginx runs.
func (o *Options) confPath() string { return filepath.Join(o.Dir, "nginx.conf") }

func (o *Options) pidPath() string { return filepath.Join(o.Dir, "nginx.pid") }

// PidFile is nginx's pid file, in Dir: the master's pid in both nginx
// modes (the syncer's child, or syncer nginx sharing Dir).
func (o *Options) PidFile() string  { return o.pidPath() }
func (o *Options) certPath() string { return filepath.Join(o.Dir, "certs", "placeholder.crt") }
func (o *Options) keyPath() string  { return filepath.Join(o.Dir, "certs", "placeholder.key") }
func (o *Options) noEndpointsSocket() string {
	return filepath.Join(o.Dir, "run", "no-endpoints.sock")
}

// streamDir holds the endpoint files of the stream servers (stream.go).
func (o *Options) streamDir() string { return filepath.Join(o.Dir, "run", "l4") }

// The unix sockets of the stream block: the server that closes the
// connections of listeners without endpoints (and its UDP twin), the HTTPS
// server's internal listener and the passthrough hop.
func (o *Options) closedSocket() string      { return filepath.Join(o.Dir, "run", "l4-closed.sock") }
func (o *Options) closedUDPSocket() string   { return filepath.Join(o.Dir, "run", "l4-closed-udp.sock") }
func (o *Options) httpsSocket() string       { return filepath.Join(o.Dir, "run", "https.sock") }
func (o *Options) passthroughSocket() string { return filepath.Join(o.Dir, "run", "passthrough.sock") }

// embeddedLua reports whether LuaDir is the copy installed from the binary.
func (o *Options) embeddedLua() bool { return o.LuaDir == filepath.Join(o.Dir, "lua") }
