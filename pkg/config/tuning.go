package config

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
)

// TuningSettings are the controller ConfigMap's keys of nginx's core,
// event, header, TLS and log directives that nginx.conf holds (a change
// reloads), parsed and validated by pkg/ingress and checked again by
// pkg/nginx's renderer. Every field's zero value is "not set": nginx.conf
// keeps what it writes without the key (see pkg/nginx's tuning.go), so
// that the checksums of Configurations that set none stay as they were.
// The switches are "on", "off" or "" (not set).
type TuningSettings struct {
	// UnderscoresInHeaders is enable-underscores-in-headers,
	// IgnoreInvalidHeaders ignore-invalid-headers.
	UnderscoresInHeaders string `json:"underscoresInHeaders,omitempty"`
	IgnoreInvalidHeaders string `json:"ignoreInvalidHeaders,omitempty"`
	// HTTP2MaxFieldSize, HTTP2MaxHeaderSize and HTTP2MaxRequests are
	// validated and kept, never rendered: nginx made their directives
	// obsolete (1.19.7).
	HTTP2MaxFieldSize  Size `json:"http2MaxFieldSize,omitempty"`
	HTTP2MaxHeaderSize Size `json:"http2MaxHeaderSize,omitempty"`
	HTTP2MaxRequests   int  `json:"http2MaxRequests,omitempty"`

	// SSLECDHCurve is ssl-ecdh-curve: "auto" or curve names joined by ':'.
	SSLECDHCurve string `json:"sslECDHCurve,omitempty"`
	// SSLBufferSize is ssl-buffer-size ("": ingress-nginx's 4k).
	SSLBufferSize Size `json:"sslBufferSize,omitempty"`

	// RetryNonIdempotent retries POST, LOCK and PATCH requests on another
	// endpoint too (proxy_next_upstream non_idempotent).
	RetryNonIdempotent bool `json:"retryNonIdempotent,omitempty"`
	// DefaultType is default-type, a MIME type ("": text/plain).
	DefaultType string `json:"defaultType,omitempty"`

	// SkipAccessLogURLs are request URIs ($request_uri, exact) the access
	// log leaves out: canonical paths joined by commas.
	SkipAccessLogURLs string `json:"skipAccessLogURLs,omitempty"`
	// AccessLogParams is access-log-params in canonical form: buffer=,
	// flush= and gzip[=] joined by one space.
	AccessLogParams string `json:"accessLogParams,omitempty"`
	// HTTPAccessLogPath is http-access-log-path: the access log of HTTP
	// requests, over AccessLogPath (as NginxSettings.AccessLogPath).
	HTTPAccessLogPath string `json:"httpAccessLogPath,omitempty"`
	// ErrorLogPath is error-log-path: "" is nginx's stderr (the syncer's),
	// else an absolute file path.
	ErrorLogPath string `json:"errorLogPath,omitempty"`
	// Syslog sends the access and error logs to a syslog server
	// (enable-syslog); SyslogHost is an IP address or DNS name, SyslogPort
	// 0 is 514.
	Syslog     bool   `json:"syslog,omitempty"`
	SyslogHost string `json:"syslogHost,omitempty"`
	SyslogPort int    `json:"syslogPort,omitempty"`

	// ReusePort adds reuseport to the public listeners ("on", "off", "").
	ReusePort string `json:"reusePort,omitempty"`
	// WorkerCPUAffinity is worker-cpu-affinity: "auto", optionally with a
	// mask, or CPU masks of 0 and 1 joined by one space.
	WorkerCPUAffinity string `json:"workerCPUAffinity,omitempty"`
	// MaxWorkerOpenFiles is worker_rlimit_nofile (0: not set).
	MaxWorkerOpenFiles int `json:"maxWorkerOpenFiles,omitempty"`
	// MultiAccept is enable-multi-accept ("on", "off", "").
	MultiAccept string `json:"multiAccept,omitempty"`
	// AioWrite is enable-aio-write: aio threads with aio_write ("on",
	// "off", "").
	AioWrite string `json:"aioWrite,omitempty"`
	// DebugConnections are debug-connection's addresses and CIDRs,
	// canonical, joined by commas.
	DebugConnections string `json:"debugConnections,omitempty"`

	// The hash tables of nginx.conf (0: not set).
	ServerNamesHashBucketSize  int `json:"serverNamesHashBucketSize,omitempty"`
	ServerNamesHashMaxSize     int `json:"serverNamesHashMaxSize,omitempty"`
	MapHashBucketSize          int `json:"mapHashBucketSize,omitempty"`
	ProxyHeadersHashBucketSize int `json:"proxyHeadersHashBucketSize,omitempty"`
	ProxyHeadersHashMaxSize    int `json:"proxyHeadersHashMaxSize,omitempty"`
	VariablesHashBucketSize    int `json:"variablesHashBucketSize,omitempty"`
	VariablesHashMaxSize       int `json:"variablesHashMaxSize,omitempty"`
}

// canonical writes the tuning settings for the checksum, only when set.
func (t *TuningSettings) canonical(w *canonicalWriter) {
	if *t == (TuningSettings{}) {
		return
	}
	w.str("tuning")
	w.bool(t.RetryNonIdempotent)
	w.bool(t.Syslog)
	for _, s := range []string{t.UnderscoresInHeaders, t.IgnoreInvalidHeaders, string(t.HTTP2MaxFieldSize),
		string(t.HTTP2MaxHeaderSize), t.SSLECDHCurve, string(t.SSLBufferSize), t.DefaultType, t.SkipAccessLogURLs,
		t.AccessLogParams, t.HTTPAccessLogPath, t.ErrorLogPath, t.SyslogHost, t.ReusePort, t.WorkerCPUAffinity,
		t.MultiAccept, t.AioWrite, t.DebugConnections} {
		w.str(s)
	}
	for _, i := range []int{t.HTTP2MaxRequests, t.SyslogPort, t.MaxWorkerOpenFiles, t.ServerNamesHashBucketSize,
		t.ServerNamesHashMaxSize, t.MapHashBucketSize, t.ProxyHeadersHashBucketSize, t.ProxyHeadersHashMaxSize,
		t.VariablesHashBucketSize, t.VariablesHashMaxSize} {
		w.int(int64(i))
	}
}

// Bounds of the tuning values.
const (
	MaxWorkerOpenFiles = 1 << 20
	// MinVariablesHashMaxSize: nginx.conf's own variables need this much.
	MinVariablesHashMaxSize = 2048
	maxHashSize             = 1 << 20
	maxHashBucketSize       = 4096
	maxTuningListLen        = 100
	maxTuningPathLen        = 256
)

// ecdhCurves are the groups ssl-ecdh-curve may name: those OpenSSL 3
// knows in every build, so that nginx -t cannot fail on one.
var ecdhCurves = map[string]bool{
	"X25519": true, "X448": true, "prime256v1": true, "secp384r1": true, "secp521r1": true,
	"P-256": true, "P-384": true, "P-521": true,
	"ffdhe2048": true, "ffdhe3072": true, "ffdhe4096": true, "ffdhe6144": true, "ffdhe8192": true,
}

var (
	// mimeTypeRe is a MIME type without parameters, lower case.
	mimeTypeRe = regexp.MustCompile(`^[a-z0-9][a-z0-9!#&^_.+-]{0,126}/[a-z0-9][a-z0-9!#&^_.+-]{0,126}$`)
	// skipURLRe is a request URI nginx.conf may hold in double quotes: no
	// quote, backslash, '$', brace, ';', space or control character.
	skipURLRe = regexp.MustCompile(`^/[A-Za-z0-9/._~%!&()*+=:@?-]{0,255}$`)
	// cpuMaskRe is one CPU mask of worker_cpu_affinity.
	cpuMaskRe = regexp.MustCompile(`^[01]{1,64}$`)
	// logParamRe is one access-log parameter in canonical form.
	logParamRe = regexp.MustCompile(`^(buffer=[1-9][0-9]{0,8}[km]?|flush=[1-9][0-9]{0,6}s|gzip(=[1-9])?)$`)
	// syslogHostRe is a DNS name or IPv4 address (IPv6: see ValidSyslogHost).
	syslogHostRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$`)
	// debugConnRe is an address or CIDR of debug_connection.
	debugConnRe = regexp.MustCompile(`^[0-9a-f.:]{2,39}(/[0-9]{1,3})?$`)
)

// ValidECDHCurve reports whether s is "auto" or known groups joined by ':'.
func ValidECDHCurve(s string) error {
	if s == "auto" {
		return nil
	}
	names := strings.Split(s, ":")
	if len(names) > 16 {
		return errors.New("at most 16 curves")
	}
	for _, n := range names {
		if !ecdhCurves[n] {
			return fmt.Errorf("unknown curve %q (auto, or names joined by ':' among X25519, X448, prime256v1, secp384r1, secp521r1, P-256, P-384, P-521, ffdhe2048 to ffdhe8192)", n)
		}
	}
	return nil
}

// ValidMIMEType reports whether s is a lower-case MIME type (default-type).
func ValidMIMEType(s string) error {
	if !mimeTypeRe.MatchString(s) {
		return errors.New("must be a MIME type such as text/html")
	}
	return nil
}

// ValidSkipURL reports whether s may be one of skip-access-log-urls.
func ValidSkipURL(s string) error {
	if !skipURLRe.MatchString(s) {
		return fmt.Errorf("%q must be a path of at most %d letters, digits and /._~%%!&()*+=:@?-", s, maxTuningPathLen)
	}
	return nil
}

// ValidCPUAffinity reports whether s is "auto", "auto <mask>" or masks of
// 0 and 1 joined by one space (worker-cpu-affinity).
func ValidCPUAffinity(s string) error {
	masks := strings.Split(s, " ")
	if masks[0] == "auto" {
		masks = masks[1:]
		if len(masks) > 1 {
			return errors.New("auto takes at most one mask")
		}
	}
	if len(masks) > 1024 {
		return errors.New("at most 1024 masks")
	}
	for _, m := range masks {
		if !cpuMaskRe.MatchString(m) {
			return errors.New(`must be "auto", "auto" and a mask, or masks of 0 and 1 (at most 64 digits) separated by spaces`)
		}
	}
	return nil
}

// ValidAccessLogParams reports whether s is access-log-params in canonical
// form: buffer=<size>, flush=<seconds>s and gzip[=<level>], each at most
// once, joined by one space.
func ValidAccessLogParams(s string) error {
	seen := map[string]bool{}
	for _, p := range strings.Split(s, " ") {
		name, _, _ := strings.Cut(p, "=")
		if !logParamRe.MatchString(p) || seen[name] {
			return fmt.Errorf("invalid access log parameter %q: buffer=<size>, flush=<time> and gzip[=<1-9>], each once", p)
		}
		seen[name] = true
	}
	if seen["flush"] && !seen["buffer"] && !seen["gzip"] {
		return errors.New("flush needs buffer or gzip")
	}
	return nil
}

// ValidSyslogHost reports whether s is an IP address or a DNS name.
func ValidSyslogHost(s string) error {
	if ip := net.ParseIP(s); ip != nil || syslogHostRe.MatchString(s) && !strings.Contains(s, "..") {
		return nil
	}
	return errors.New("must be an IP address or a DNS name")
}

// ValidDebugConnection reports whether s is an IP address or CIDR.
func ValidDebugConnection(s string) error {
	if !debugConnRe.MatchString(s) {
		return fmt.Errorf("%q must be an IP address or CIDR", s)
	}
	if net.ParseIP(s) == nil {
		if _, _, err := net.ParseCIDR(s); err != nil {
			return fmt.Errorf("%q must be an IP address or CIDR", s)
		}
	}
	return nil
}

// ValidHashSize reports whether n may be a hash table's max size (bucket
// false) or bucket size (bucket true); min is its least value.
func ValidHashSize(n, min int, bucket bool) error {
	max := maxHashSize
	if bucket {
		max = maxHashBucketSize
	}
	if n < min || n > max {
		return fmt.Errorf("must be between %d and %d", min, max)
	}
	return nil
}

// ValidSwitch reports whether s is "on", "off" or "".
func ValidSwitch(s string) error {
	if s != "" && s != "on" && s != "off" {
		return fmt.Errorf("switch %q must be on or off", s)
	}
	return nil
}

// Validate checks every set field of t with the validators above (what
// pkg/ingress's parsers produce); pkg/nginx renders nothing of t before.
func (t *TuningSettings) Validate() error {
	var errs []error
	check := func(what string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
		}
	}
	for what, s := range map[string]string{"underscores in headers": t.UnderscoresInHeaders,
		"ignore invalid headers": t.IgnoreInvalidHeaders, "reuse port": t.ReusePort,
		"multi accept": t.MultiAccept, "aio write": t.AioWrite} {
		check(what, ValidSwitch(s))
	}
	for what, s := range map[string]Size{"ssl buffer size": t.SSLBufferSize,
		"http2 max field size": t.HTTP2MaxFieldSize, "http2 max header size": t.HTTP2MaxHeaderSize} {
		if n, ok := s.Bytes(); s != "" && (!ok || n < 1) {
			check(what, fmt.Errorf("invalid size %q", s))
		}
	}
	if n, _ := t.SSLBufferSize.Bytes(); n > 16<<10 {
		check("ssl buffer size", errors.New("must be at most 16k"))
	}
	if t.SSLECDHCurve != "" {
		check("ssl ecdh curve", ValidECDHCurve(t.SSLECDHCurve))
	}
	if t.DefaultType != "" {
		check("default type", ValidMIMEType(t.DefaultType))
	}
	if t.AccessLogParams != "" {
		check("access log params", ValidAccessLogParams(t.AccessLogParams))
	}
	if t.WorkerCPUAffinity != "" {
		check("worker cpu affinity", ValidCPUAffinity(t.WorkerCPUAffinity))
	}
	check("skip access log urls", ValidSkipURLList(t.SkipAccessLogURLs))
	check("debug connections", ValidDebugConnectionList(t.DebugConnections))
	if t.SyslogHost != "" {
		check("syslog host", ValidSyslogHost(t.SyslogHost))
	}
	if t.SyslogPort < 0 || t.SyslogPort > 65535 {
		check("syslog port", errors.New("must be between 1 and 65535"))
	}
	if t.MaxWorkerOpenFiles < 0 || t.MaxWorkerOpenFiles > MaxWorkerOpenFiles {
		check("max worker open files", fmt.Errorf("must be between 0 and %d", MaxWorkerOpenFiles))
	}
	for _, h := range t.HashSizes() {
		if h.n != 0 {
			check(h.directive, ValidHashSize(h.n, h.min, h.bucket))
		}
	}
	return errors.Join(errs...)
}

// eachOf checks every element of a list joined by commas ("" is none).
func eachOf(list string, valid func(string) error) error {
	if list == "" {
		return nil
	}
	items := strings.Split(list, ",")
	if len(items) > maxTuningListLen {
		return fmt.Errorf("at most %d entries", maxTuningListLen)
	}
	for _, s := range items {
		if err := valid(s); err != nil {
			return err
		}
	}
	return nil
}

// HashSize is a hash table directive of nginx.conf and its value.
type HashSize struct {
	directive string
	n, min    int
	bucket    bool
}

// Directive returns the directive and its value.
func (h HashSize) Directive() (string, int) { return h.directive, h.n }

// HashSizes returns the hash table directives of t, set or not (0).
func (t *TuningSettings) HashSizes() []HashSize {
	return []HashSize{
		{"server_names_hash_bucket_size", t.ServerNamesHashBucketSize, 32, true},
		{"server_names_hash_max_size", t.ServerNamesHashMaxSize, 512, false},
		{"map_hash_bucket_size", t.MapHashBucketSize, 32, true},
		{"proxy_headers_hash_bucket_size", t.ProxyHeadersHashBucketSize, 64, true},
		{"proxy_headers_hash_max_size", t.ProxyHeadersHashMaxSize, 512, false},
		{"variables_hash_bucket_size", t.VariablesHashBucketSize, 64, true},
		{"variables_hash_max_size", t.VariablesHashMaxSize, MinVariablesHashMaxSize, false},
	}
}

// HashSizeMin returns the least value of a hash table's key, by its
// directive (what pkg/ingress's parser checks against).
func HashSizeMin(directive string) (min int, bucket bool) {
	for _, h := range (&TuningSettings{}).HashSizes() {
		if h.directive == directive {
			return h.min, h.bucket
		}
	}
	return 0, false
}

// ValidSkipURLList checks skip-access-log-urls in canonical form.
func ValidSkipURLList(s string) error { return eachOf(s, ValidSkipURL) }

// ValidDebugConnectionList checks debug-connections in canonical form.
func ValidDebugConnectionList(s string) error { return eachOf(s, ValidDebugConnection) }
