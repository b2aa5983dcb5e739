package ingress

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// parseGlobal reads cm over the defaults, without history: an invalid
// value keeps the default.
func parseGlobal(cm *corev1.ConfigMap) (config.Global, []string) { return parseGlobalKeeping(cm, nil) }

// parseGlobalKeeping reads cm over the defaults; good holds the values kept
// for keys whose value is invalid (absent: the default is kept).
func parseGlobalKeeping(cm *corev1.ConfigMap, good map[string]string) (config.Global, []string) {
	g := config.DefaultGlobal()
	if cm == nil || len(cm.Data) == 0 {
		return g, nil
	}
	data := cm.Data
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var problems []string
	for _, k := range keys {
		v := data[k]
		err := setGlobalKey(&g, k, v)
		if err == nil {
			continue
		}
		kept := "default kept"
		if prev, ok := good[k]; ok && setGlobalKey(&g, k, prev) == nil {
			kept = "previous value " + intent.Quote(prev) + " kept"
		}
		problems = append(problems, fmt.Sprintf("key %s=%s: %v; %s", k, intent.Quote(v), err, kept))
	}
	return g, problems
}

// validGlobalValue reports whether v is a valid value of the ConfigMap key
// k (whatever the other keys say).
func validGlobalValue(k, v string) bool {
	g := config.DefaultGlobal()
	return setGlobalKey(&g, k, v) == nil
}

// setChecked sets one ConfigMap key in g; g is unchanged on error.
func setGlobalKey(g *config.Global, k, v string) error {
	if ok, err := setGlobalAuth(g, k, v); ok { // allow-lists
		return err
	}
	if set, ok := otelKeys[k]; ok { // whole values, validated by their parsers
		return set(g, v)
	}
	set, ok := globalKeys[k]
	if !ok {
		set, ok = moduleKeys[k]
	}
	if !ok {
		set, ok = tuningSetter(k)
	}
	if !ok {
		return errUnsupported
	}
	// Log formats have a validator of their own, which takes '$', braces
	// and double quotes (JSON formats).
	if k != "log-format-upstream" && k != "log-format-stream" && !allowListKey(k) {
		if err := checkForbidden(v, false); err != nil {
			return err
		}
	}
	return set(g, v)
}

// setter parses a value and stores it in g, leaving g as it was on error.
type setter func(g *config.Global, v string) error

// field makes the setter of the field that f points to from parse.
func field[T any](f func(*config.Global) *T, parse func(string) (T, error)) setter {
	return func(g *config.Global, v string) error {
		x, err := parse(v)
		if err == nil {
			*f(g) = x
		}
		return err
	}
}

func boolField(f func(*config.Global) *bool) setter { return field(f, parseBool) }

func intField(f func(*config.Global) *int, lo, hi int) setter {
	return field(f, func(v string) (int, error) { return intent.ParseIntRange(v, lo, hi) })
}

func sizeField(f func(*config.Global) *config.Size, min int64) setter {
	return field(f, func(v string) (config.Size, error) { return parseSizeAtLeast(v, min) })
}

// globalKeys are the ConfigMap keys we read. It is never modified.
var globalKeys = map[string]setter{
	"ssl-redirect":                   boolField(func(g *config.Global) *bool { return &g.SSLRedirect }),
	"force-ssl-redirect":             boolField(func(g *config.Global) *bool { return &g.ForceSSLRedirect }),
	"use-forwarded-headers":          boolField(func(g *config.Global) *bool { return &g.UseForwardedHeaders }),
	"allow-snippet-annotations":      boolField(func(g *config.Global) *bool { return &g.AllowSnippets }),
	"proxy-connect-timeout":          intField(func(g *config.Global) *int { return &g.ProxyConnectTimeout }, 1, intent.MaxProxyTimeout),
	"proxy-read-timeout":             intField(func(g *config.Global) *int { return &g.ProxyReadTimeout }, 1, intent.MaxProxyTimeout),
	"proxy-send-timeout":             intField(func(g *config.Global) *int { return &g.ProxySendTimeout }, 1, intent.MaxProxyTimeout),
	"proxy-body-size":                field(func(g *config.Global) *config.Size { return &g.ProxyBodySize }, parseSize),
	"upstream-keepalive-connections": intField(func(g *config.Global) *int { return &g.UpstreamKeepalive }, 0, intent.MaxKeepalive),

	"use-gzip":        boolField(func(g *config.Global) *bool { return &g.Nginx.UseGzip }),
	"gzip-level":      intField(func(g *config.Global) *int { return &g.Nginx.GzipLevel }, 1, 9),
	"gzip-min-length": intField(func(g *config.Global) *int { return &g.Nginx.GzipMinLength }, 0, intent.MaxGlobalCount),
	"gzip-types":      field(func(g *config.Global) *string { return &g.Nginx.GzipTypes }, parseGzipTypes),
	"gzip-disable":    field(func(g *config.Global) *string { return &g.Nginx.GzipDisable }, parseGzipDisable),

	"ssl-protocols":          field(func(g *config.Global) *string { return &g.Nginx.SSLProtocols }, parseSSLProtocols),
	"ssl-ciphers":            field(func(g *config.Global) *string { return &g.Nginx.SSLCiphers }, parseSSLCiphers),
	"ssl-session-cache":      boolField(func(g *config.Global) *bool { return &g.Nginx.SSLSessionCache }),
	"ssl-session-cache-size": field(func(g *config.Global) *config.Size { return &g.Nginx.SSLSessionCacheSize }, parseSharedZoneSize),
	"ssl-session-timeout":    field(func(g *config.Global) *int { return &g.Nginx.SSLSessionTimeout }, parseDuration),
	"ssl-session-tickets":    boolField(func(g *config.Global) *bool { return &g.Nginx.SSLSessionTickets }),

	"keep-alive":                  intField(func(g *config.Global) *int { return &g.Nginx.KeepAlive }, 0, intent.MaxGlobalSeconds),
	"keep-alive-requests":         intField(func(g *config.Global) *int { return &g.Nginx.KeepAliveRequests }, 1, intent.MaxGlobalCount),
	"upstream-keepalive-timeout":  intField(func(g *config.Global) *int { return &g.Nginx.UpstreamKeepaliveTimeout }, 1, intent.MaxGlobalSeconds),
	"upstream-keepalive-requests": intField(func(g *config.Global) *int { return &g.Nginx.UpstreamKeepaliveRequests }, 1, intent.MaxGlobalCount),

	"client-header-timeout":       intField(func(g *config.Global) *int { return &g.Nginx.ClientHeaderTimeout }, 1, intent.MaxGlobalSeconds),
	"client-body-timeout":         intField(func(g *config.Global) *int { return &g.Nginx.ClientBodyTimeout }, 1, intent.MaxGlobalSeconds),
	"client-header-buffer-size":   sizeField(func(g *config.Global) *config.Size { return &g.Nginx.ClientHeaderBufferSize }, 1),
	"large-client-header-buffers": setLargeClientHeaderBuffers,

	"proxy-buffering":               field(func(g *config.Global) *bool { return &g.Nginx.ProxyBuffering }, parseOnOff),
	"proxy-buffer-size":             sizeField(func(g *config.Global) *config.Size { return &g.Nginx.ProxyBufferSize }, 1),
	"proxy-buffers-number":          intField(func(g *config.Global) *int { return &g.Nginx.ProxyBuffersNumber }, 2, 1024),
	"proxy-busy-buffers-size":       sizeField(func(g *config.Global) *config.Size { return &g.Nginx.ProxyBusyBuffersSize }, 1),
	"client-body-buffer-size":       sizeField(func(g *config.Global) *config.Size { return &g.Nginx.ClientBodyBufferSize }, 1),
	"proxy-stream-timeout":          field(func(g *config.Global) *int { return &g.Nginx.ProxyStreamTimeout }, parseDuration),
	"proxy-protocol-header-timeout": field(func(g *config.Global) *int { return &g.Nginx.ProxyProtocolHeaderTimeout }, parseDuration),
	"proxy-stream-responses":        intField(func(g *config.Global) *int { return &g.Nginx.ProxyStreamResponses }, 0, intent.MaxGlobalCount),
	"proxy-next-upstream-timeout":   intField(func(g *config.Global) *int { return &g.Nginx.ProxyNextUpstreamTimeout }, 0, intent.MaxGlobalSeconds),
	"grpc-buffer-size-kb":           intField(func(g *config.Global) *int { return &g.Nginx.GRPCBufferSizeKB }, 0, 1<<20),
	"upstream-keepalive-time":       field(func(g *config.Global) *int { return &g.Nginx.UpstreamKeepaliveTime }, parseDuration),
	"allow-backend-server-header":   boolField(func(g *config.Global) *bool { return &g.Nginx.AllowBackendServerHeader }),
	"hide-headers":                  field(func(g *config.Global) *string { return &g.Nginx.HideHeaders }, parseHideHeaders),
	"relative-redirects":            boolField(func(g *config.Global) *bool { return &g.Nginx.RelativeRedirects }),

	"use-http2":                    boolField(func(g *config.Global) *bool { return &g.Nginx.UseHTTP2 }),
	"http2-max-concurrent-streams": intField(func(g *config.Global) *int { return &g.Nginx.HTTP2MaxConcurrentStreams }, 1, intent.MaxGlobalCount),

	"log-format-upstream":    field(func(g *config.Global) *string { return &g.Nginx.LogFormatUpstream }, parseLogFormat),
	"log-format-escape-json": boolField(func(g *config.Global) *bool { return &g.Nginx.LogFormatEscapeJSON }),
	"log-format-escape-none": boolField(func(g *config.Global) *bool { return &g.Nginx.LogFormatEscapeNone }),
	"error-log-level":        field(func(g *config.Global) *string { return &g.Nginx.ErrorLogLevel }, parseLogLevel),
	"disable-access-log":     boolField(func(g *config.Global) *bool { return &g.Nginx.DisableAccessLog }),
	"access-log-path":        field(func(g *config.Global) *string { return &g.Nginx.AccessLogPath }, parseAccessLogPath),
	"log-format-stream":      field(func(g *config.Global) *string { return &g.Nginx.LogFormatStream }, parseStreamLogFormat),
	"stream-access-log-path": field(func(g *config.Global) *string { return &g.Nginx.StreamAccessLogPath }, parseAccessLogPath),

	"server-tokens":                 boolField(func(g *config.Global) *bool { return &g.Nginx.ServerTokens }),
	"generate-request-id":           boolField(func(g *config.Global) *bool { return &g.Nginx.GenerateRequestID }),
	"http-redirect-code":            field(func(g *config.Global) *int { return &g.Nginx.HTTPRedirectCode }, parseRedirectCode),
	"no-tls-redirect-locations":     field(func(g *config.Global) *string { return &g.NoTLSRedirectLocations }, parseLocationList),
	"proxy-add-original-uri-header": boolField(func(g *config.Global) *bool { return &g.Nginx.ProxyAddOriginalURIHeader }),
	"worker-processes":              field(func(g *config.Global) *string { return &g.Nginx.WorkerProcesses }, parseWorkerProcesses),
	"max-worker-connections":        field(func(g *config.Global) *int { return &g.Nginx.MaxWorkerConnections }, parseWorkerConnections),
	"worker-shutdown-timeout":       field(func(g *config.Global) *int { return &g.Nginx.WorkerShutdownTimeout }, parseDuration),

	"proxy-set-headers":               field(func(g *config.Global) *string { return &g.ProxySetHeaders }, parseConfigMapRef),
	"add-headers":                     field(func(g *config.Global) *string { return &g.AddHeaders }, parseConfigMapRef),
	"global-allowed-response-headers": field(func(g *config.Global) *string { return &g.AllowedResponseHeaders }, parseAllowedHeaders),
	"service-upstream":                boolField(func(g *config.Global) *bool { return &g.ServiceUpstream }),
	"proxy-ssl-location-only":         boolField(func(g *config.Global) *bool { return &g.ProxySSLLocationOnly }),
	"load-balance":                    field(func(g *config.Global) *string { return &g.LoadBalance }, parseLoadBalance),
	"proxy-request-buffering":         proxyField("proxy-request-buffering"),
	"proxy-http-version":              proxyField("proxy-http-version"),
	"proxy-next-upstream":             proxyField("proxy-next-upstream"),
	"proxy-next-upstream-tries":       proxyField("proxy-next-upstream-tries"),
	"proxy-redirect-from":             proxyField("proxy-redirect-from"),
	"proxy-redirect-to":               proxyField("proxy-redirect-to"),
	"proxy-cookie-domain":             proxyField("proxy-cookie-domain"),
	"proxy-cookie-path":               proxyField("proxy-cookie-path"),
	"custom-http-errors":              field(func(g *config.Global) *string { return &g.CustomHTTPErrors }, parseHTTPErrorsList),
	"limit-req-status-code":           field(func(g *config.Global) *int { return &g.LimitReqStatusCode }, parseLimitStatus),
	"limit-conn-status-code":          field(func(g *config.Global) *int { return &g.LimitConnStatusCode }, parseLimitStatus),
	"limit-rate":                      field(func(g *config.Global) *int64 { return &g.LimitRate }, parseLimitKB),
	"limit-rate-after":                field(func(g *config.Global) *int64 { return &g.LimitRateAfter }, parseLimitKB),

	"hsts":                    boolField(func(g *config.Global) *bool { return &g.Nginx.HSTS }),
	"hsts-max-age":            intField(func(g *config.Global) *int { return &g.Nginx.HSTSMaxAge }, 0, intent.MaxGlobalCount),
	"hsts-include-subdomains": boolField(func(g *config.Global) *bool { return &g.Nginx.HSTSIncludeSubdomains }),
	"hsts-preload":            boolField(func(g *config.Global) *bool { return &g.Nginx.HSTSPreload }),

	"use-proxy-protocol":         boolField(func(g *config.Global) *bool { return &g.Nginx.UseProxyProtocol }),
	"enable-real-ip":             boolField(func(g *config.Global) *bool { return &g.Nginx.EnableRealIP }),
	"compute-full-forwarded-for": boolField(func(g *config.Global) *bool { return &g.Nginx.ComputeFullForwardedFor }),
	"forwarded-for-header":       field(func(g *config.Global) *string { return &g.Nginx.ForwardedForHeader }, parseHeaderName),
	"proxy-real-ip-cidr":         field(func(g *config.Global) *string { return &g.Nginx.ProxyRealIPCIDR }, parseCIDRList),
	"block-cidrs":                field(func(g *config.Global) *string { return &g.BlockCIDRs }, parseCIDRList),
	"whitelist-source-range":     field(func(g *config.Global) *string { return &g.AllowSourceRange }, parseSourceRangeDefault),
	"denylist-source-range":      field(func(g *config.Global) *string { return &g.DenySourceRange }, parseSourceRangeDefault),
	"block-user-agents":          field(func(g *config.Global) *string { return &g.BlockUserAgents }, parseBlockList),
	"block-referers":             field(func(g *config.Global) *string { return &g.BlockReferers }, parseBlockList),
}

func parseBool(v string) (bool, error) {
	b, err := parseBoolPtr(v)
	if err != nil {
		return false, err
	}
	return *b, nil
}

// parseOnOff parses nginx's on and off (proxy-buffering), in any case.
func parseOnOff(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, errors.New("must be on or off")
}

// parseSizeAtLeast parses an nginx size of at least min bytes, written as
// nginx.conf takes it (at most 9 digits, no leading zero).
func parseSizeAtLeast(v string, min int64) (config.Size, error) {
	s, err := parseSize(v)
	if err != nil {
		return "", err
	}
	if digits := strings.TrimRight(v, "kKmMgG"); len(digits) > 9 || len(digits) > 1 && digits[0] == '0' {
		return "", errors.New("must be an nginx size of at most 9 digits without a leading zero, such as 8k")
	}
	if n, _ := s.Bytes(); n < min {
		return "", fmt.Errorf("must be at least %d bytes", min)
	}
	return s, nil
}

// parseSharedZoneSize parses the size of a shared memory zone: nginx -t
// maps it, so it is bounded (32k to 1g).
func parseSharedZoneSize(v string) (config.Size, error) {
	s, err := parseSizeAtLeast(v, intent.MinSharedZoneSize)
	if n, _ := s.Bytes(); err == nil && n > 1<<30 {
		err = errors.New("must be at most 1g")
	}
	if err != nil {
		return "", err
	}
	return s, nil
}

// setLargeClientHeaderBuffers parses "<number> <size>" ("4 8k").
func setLargeClientHeaderBuffers(g *config.Global, v string) error {
	f := strings.Fields(v)
	if len(f) != 2 {
		return errors.New(`must be a number and a size, such as "4 8k"`)
	}
	n, err := intent.ParseIntRange(f[0], 1, 1024)
	if err != nil {
		return fmt.Errorf("number of buffers %w", err)
	}
	s, err := parseSizeAtLeast(f[1], 1<<10)
	if err != nil {
		return fmt.Errorf("buffer size %w", err)
	}
	g.Nginx.LargeClientHeaderBuffers, g.Nginx.LargeClientHeaderBufferSize = n, s
	return nil
}

// durationUnits are the nginx time units we accept, in seconds.
var durationUnits = map[byte]int{'s': 1, 'm': 60, 'h': 3600, 'd': 86400}

// parseDuration parses an nginx time of whole seconds: a number of
// seconds ("600") or numbers with units d, h, m, s ("10m", "1h30m"), 1 s
// to 7 days.
func parseDuration(v string) (int, error) {
	if intent.AllDigits(v) {
		return intent.ParseIntRange(v, 1, intent.MaxGlobalSeconds)
	}
	total, i := 0, 0
	for i < len(v) {
		j := i
		for j < len(v) && v[j] >= '0' && v[j] <= '9' {
			j++
		}
		unit, ok := 0, false
		if j < len(v) {
			unit, ok = durationUnits[v[j]]
		}
		if j == i || j-i > 7 || !ok || strings.HasPrefix(v[j:], "ms") {
			return 0, errors.New("must be an nginx time in whole seconds, such as 600, 10m or 1h30m")
		}
		n, _ := strconv.Atoi(v[i:j])
		total += n * unit
		i = j + 1
	}
	if total < 1 || total > intent.MaxGlobalSeconds {
		return 0, fmt.Errorf("must be between 1s and %ds", intent.MaxGlobalSeconds)
	}
	return total, nil
}

var logLevels = []string{"debug", "info", "notice", "warn", "error", "crit", "alert", "emerg"}

func parseLogLevel(v string) (string, error) {
	for _, l := range logLevels {
		if v == l {
			return v, nil
		}
	}
	return "", fmt.Errorf("must be one of %s", strings.Join(logLevels, ", "))
}

// parseWorkerConnections accepts 16 to 2^20, or 0 for the syncer's flag.
func parseWorkerConnections(v string) (int, error) {
	n, err := intent.ParseIntRange(v, 0, 1<<20)
	if err == nil && n > 0 && n < 16 {
		err = errors.New("must be 0 or between 16 and 1048576")
	}
	return n, err
}

// parseWorkerProcesses accepts "auto" or 1 to 1024.
func parseWorkerProcesses(v string) (string, error) {
	if v == "auto" {
		return v, nil
	}
	n, err := intent.ParseIntRange(v, 1, 1024)
	if err != nil {
		return "", fmt.Errorf(`must be "auto" or a number from 1 to 1024`)
	}
	return strconv.Itoa(n), nil
}
