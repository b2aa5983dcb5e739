package ingress

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Setters of the ConfigMap keys of nginx's core, event, header, TLS and log
// directives (config.TuningSettings), and of the keys that are validated
// but have no effect. Each value is parsed into the canonical form that
// config's validator of its kind checks (the renderer checks it again).

// tuningKeys are those keys (looked up after globalKeys and moduleKeys).
// It is never modified.
var tuningKeys = map[string]setter{
	"enable-underscores-in-headers": switchField(func(t *config.TuningSettings) *string { return &t.UnderscoresInHeaders }),
	"ignore-invalid-headers":        switchField(func(t *config.TuningSettings) *string { return &t.IgnoreInvalidHeaders }),
	"http2-max-field-size":          sizeField(func(g *config.Global) *config.Size { return &g.Nginx.Tuning.HTTP2MaxFieldSize }, 1),
	"http2-max-header-size":         sizeField(func(g *config.Global) *config.Size { return &g.Nginx.Tuning.HTTP2MaxHeaderSize }, 1),
	"http2-max-requests":            intField(func(g *config.Global) *int { return &g.Nginx.Tuning.HTTP2MaxRequests }, 0, intent.MaxGlobalCount),

	"ssl-ecdh-curve":  field(func(g *config.Global) *string { return &g.Nginx.Tuning.SSLECDHCurve }, parseECDHCurve),
	"ssl-buffer-size": field(func(g *config.Global) *config.Size { return &g.Nginx.Tuning.SSLBufferSize }, parseSSLBufferSize),

	"retry-non-idempotent": boolField(func(g *config.Global) *bool { return &g.Nginx.Tuning.RetryNonIdempotent }),
	"default-type":         field(func(g *config.Global) *string { return &g.Nginx.Tuning.DefaultType }, parseDefaultType),

	"skip-access-log-urls": field(func(g *config.Global) *string { return &g.Nginx.Tuning.SkipAccessLogURLs }, parseSkipURLs),
	"access-log-params":    field(func(g *config.Global) *string { return &g.Nginx.Tuning.AccessLogParams }, parseAccessLogParams),
	"http-access-log-path": field(func(g *config.Global) *string { return &g.Nginx.Tuning.HTTPAccessLogPath }, parseAccessLogPath),
	"error-log-path":       field(func(g *config.Global) *string { return &g.Nginx.Tuning.ErrorLogPath }, parseErrorLogPath),
	"enable-syslog":        boolField(func(g *config.Global) *bool { return &g.Nginx.Tuning.Syslog }),
	"syslog-host":          field(func(g *config.Global) *string { return &g.Nginx.Tuning.SyslogHost }, parseSyslogHost),
	"syslog-port":          intField(func(g *config.Global) *int { return &g.Nginx.Tuning.SyslogPort }, 1, 65535),

	"reuse-port":            switchField(func(t *config.TuningSettings) *string { return &t.ReusePort }),
	"worker-cpu-affinity":   field(func(g *config.Global) *string { return &g.Nginx.Tuning.WorkerCPUAffinity }, parseCPUAffinity),
	"max-worker-open-files": intField(func(g *config.Global) *int { return &g.Nginx.Tuning.MaxWorkerOpenFiles }, 0, config.MaxWorkerOpenFiles),
	"enable-multi-accept":   switchField(func(t *config.TuningSettings) *string { return &t.MultiAccept }),
	"enable-aio-write":      switchField(func(t *config.TuningSettings) *string { return &t.AioWrite }),
	"debug-connections":     field(func(g *config.Global) *string { return &g.Nginx.Tuning.DebugConnections }, parseDebugConnections),

	"server-name-hash-bucket-size":   hashField("server_names_hash_bucket_size", func(t *config.TuningSettings) *int { return &t.ServerNamesHashBucketSize }),
	"server-name-hash-max-size":      hashField("server_names_hash_max_size", func(t *config.TuningSettings) *int { return &t.ServerNamesHashMaxSize }),
	"map-hash-bucket-size":           hashField("map_hash_bucket_size", func(t *config.TuningSettings) *int { return &t.MapHashBucketSize }),
	"proxy-headers-hash-bucket-size": hashField("proxy_headers_hash_bucket_size", func(t *config.TuningSettings) *int { return &t.ProxyHeadersHashBucketSize }),
	"proxy-headers-hash-max-size":    hashField("proxy_headers_hash_max_size", func(t *config.TuningSettings) *int { return &t.ProxyHeadersHashMaxSize }),
	"variables-hash-bucket-size":     hashField("variables_hash_bucket_size", func(t *config.TuningSettings) *int { return &t.VariablesHashBucketSize }),
	"variables-hash-max-size":        hashField("variables_hash_max_size", func(t *config.TuningSettings) *int { return &t.VariablesHashMaxSize }),

	// Validated, no effect (see the registry's notes).
	"enable-serial-reloads":           checkOnly(parseBool),
	"annotations-risk-level":          checkOnly(parseRiskLevel),
	"annotation-value-word-blocklist": checkOnly(parseWordList),
	"strict-validate-path-type":       checkOnly(parseBool),
	"allow-cross-namespace-resources": checkOnly(parseBool),
}

// noEffectKeys are the keys ingress-nginx v1.15 documents but no longer
// reads: any value is accepted and ignored, as there.
var noEffectKeys = []string{
	"bind-address", "use-geoip",
	"jaeger-collector-host", "jaeger-collector-port", "jaeger-endpoint", "jaeger-service-name",
	"jaeger-propagation-format", "jaeger-sampler-type", "jaeger-sampler-param", "jaeger-sampler-host",
	"jaeger-sampler-port", "jaeger-trace-context-header-name", "jaeger-debug-header", "jaeger-baggage-header",
	"jaeger-trace-baggage-header-prefix",
}

// tuningSetter returns the setter of a tuning or no-effect key.
func tuningSetter(k string) (setter, bool) {
	if set, ok := tuningKeys[k]; ok {
		return set, true
	}
	for _, n := range noEffectKeys {
		if n == k {
			return func(*config.Global, string) error { return nil }, true
		}
	}
	return nil, false
}

// switchField makes the setter of an on/off/unset switch from a boolean.
func switchField(f func(*config.TuningSettings) *string) setter {
	return func(g *config.Global, v string) error {
		b, err := parseBool(v)
		if err == nil {
			*f(&g.Nginx.Tuning) = onOffWord(b)
		}
		return err
	}
}

func onOffWord(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// hashField makes the setter of a hash table size of the directive d.
func hashField(d string, f func(*config.TuningSettings) *int) setter {
	min, bucket := config.HashSizeMin(d)
	return func(g *config.Global, v string) error {
		n, err := strconv.Atoi(v)
		if err == nil {
			err = config.ValidHashSize(n, min, bucket)
		} else {
			err = errors.New("must be a number")
		}
		if err == nil {
			*f(&g.Nginx.Tuning) = n
		}
		return err
	}
}

// checkOnly makes the setter of a key that is validated and has no effect.
func checkOnly[T any](parse func(string) (T, error)) setter {
	return func(_ *config.Global, v string) error {
		_, err := parse(v)
		return err
	}
}

// parseECDHCurve accepts "auto" or curve names joined by ':'.
func parseECDHCurve(v string) (string, error) { return v, config.ValidECDHCurve(v) }

// parseSSLBufferSize accepts 1k to 16k (OpenSSL's largest record).
func parseSSLBufferSize(v string) (config.Size, error) {
	s, err := parseSizeAtLeast(v, 1<<10)
	if n, _ := s.Bytes(); err == nil && n > 16<<10 {
		err = errors.New("must be at most 16k")
	}
	return s, err
}

// parseDefaultType accepts a MIME type, in any case.
func parseDefaultType(v string) (string, error) {
	v = strings.ToLower(v)
	return v, config.ValidMIMEType(v)
}

// parseSkipURLs parses request URIs separated by commas (and spaces) into
// their canonical form: in the order given, joined by commas.
func parseSkipURLs(v string) (string, error) {
	items, err := splitList(v, true)
	if err != nil {
		return "", err
	}
	canon := strings.Join(items, ",")
	return canon, config.ValidSkipURLList(canon)
}

// parseAccessLogParams parses nginx's access_log parameters: buffer=size,
// flush=time and gzip[=level], separated by spaces or commas.
func parseAccessLogParams(v string) (string, error) {
	items, err := splitList(v, true)
	if err != nil {
		return "", err
	}
	out := make([]string, 0, len(items))
	for _, p := range items {
		name, value, _ := strings.Cut(p, "=")
		switch name {
		case "buffer":
			s, err := parseSizeAtLeast(value, 1)
			if err != nil {
				return "", fmt.Errorf("buffer %w", err)
			}
			p = "buffer=" + strings.ToLower(string(s))
		case "flush":
			n, err := parseDuration(value)
			if err != nil {
				return "", fmt.Errorf("flush %w", err)
			}
			p = "flush=" + strconv.Itoa(n) + "s"
		}
		out = append(out, p)
	}
	canon := strings.Join(out, " ")
	return canon, config.ValidAccessLogParams(canon)
}

// ingressNginxErrorLog is ingress-nginx's default error-log-path, a
// symlink to /dev/stderr in its image.
const ingressNginxErrorLog = "/var/log/nginx/error.log"

// parseErrorLogPath parses error-log-path: stderr (and ingress-nginx's
// default) is "", another value an access-log-path's file or /dev/stdout.
func parseErrorLogPath(v string) (string, error) {
	switch v {
	case ingressNginxErrorLog, config.AccessLogStderr:
		return "", nil
	case config.AccessLogStdout:
		return v, nil
	}
	return parseAccessLogPath(v)
}

// parseSyslogHost accepts an IP address or a DNS name, in any case.
func parseSyslogHost(v string) (string, error) {
	v = strings.ToLower(v)
	return v, config.ValidSyslogHost(v)
}

// parseCPUAffinity accepts "auto", "auto <mask>" or masks, separated by
// spaces.
func parseCPUAffinity(v string) (string, error) {
	canon := strings.Join(strings.Fields(v), " ")
	return canon, config.ValidCPUAffinity(canon)
}

// parseDebugConnections parses addresses and CIDRs separated by commas.
func parseDebugConnections(v string) (string, error) {
	items, err := splitList(v, true)
	if err != nil {
		return "", err
	}
	canon := strings.ToLower(strings.Join(items, ","))
	return canon, config.ValidDebugConnectionList(canon)
}

// parseRiskLevel accepts ingress-nginx's risk levels.
func parseRiskLevel(v string) (string, error) {
	switch v {
	case "Critical", "High", "Medium", "Low":
		return v, nil
	}
	return "", errors.New("must be Critical, High, Medium or Low")
}

// parseWordList accepts words separated by commas.
func parseWordList(v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	return splitList(v, true)
}
