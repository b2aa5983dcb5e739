package ingress

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"

	"github.com/ingress-sync/ingress-sync/test/testkit/check"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"strings"
	"testing"
)

// TestGlobalKeys parses each ConfigMap key alone: valid forms give the
// field, invalid forms keep the default with a reason.
func TestGlobalKeys(t *testing.T) {
	type kv = [2]string
	d := config.DefaultGlobal()
	with := func(f func(g *config.Global)) config.Global { g := config.DefaultGlobal(); f(&g); return g }
	tests := map[string]struct {
		in   kv
		want config.Global // ignored when bad
		bad  string        // part of the reason
	}{
		"use-gzip":                           {in: kv{"use-gzip", "true"}, want: with(func(g *config.Global) { g.Nginx.UseGzip = true })},
		"gzip-disable msie6":                 {in: kv{"gzip-disable", "msie6"}, want: with(func(g *config.Global) { g.Nginx.GzipDisable = "msie6" })},
		"gzip-disable regex":                 {in: kv{"gzip-disable", `MSIE [1-6][.]`}, want: with(func(g *config.Global) { g.Nginx.GzipDisable = `MSIE [1-6][.]` })},
		"gzip-disable comma":                 {in: kv{"gzip-disable", "a,b"}, bad: "must be msie6"},
		"gzip-disable not a regex":           {in: kv{"gzip-disable", "(a"}, bad: "not a regular expression"},
		"hide-headers canonical":             {in: kv{"hide-headers", "X-Powered-By, x-debug,X-Powered-By"}, want: with(func(g *config.Global) { g.Nginx.HideHeaders = "x-debug,x-powered-by" })},
		"hide-headers token beyond nginx":    {in: kv{"hide-headers", "X-A|B"}, bad: "letters, digits"},
		"upstream-keepalive-time":            {in: kv{"upstream-keepalive-time", "30m"}, want: with(func(g *config.Global) { g.Nginx.UpstreamKeepaliveTime = 1800 })},
		"proxy-buffers-number":               {in: kv{"proxy-buffers-number", "8"}, want: with(func(g *config.Global) { g.Nginx.ProxyBuffersNumber = 8 })},
		"proxy-buffers-number one":           {in: kv{"proxy-buffers-number", "1"}, bad: "between 2 and 1024"},
		"http-redirect-code":                 {in: kv{"http-redirect-code", "301"}, want: with(func(g *config.Global) { g.Nginx.HTTPRedirectCode = 301 })},
		"http-redirect-code 303":             {in: kv{"http-redirect-code", "303"}, bad: "must be 301, 302, 307 or 308"},
		"no-tls-redirect-locations":          {in: kv{"no-tls-redirect-locations", " /a, /b/c ,"}, want: with(func(g *config.Global) { g.NoTLSRedirectLocations = "/a,/b/c" })},
		"no-tls-redirect-locations none":     {in: kv{"no-tls-redirect-locations", ""}, want: with(func(g *config.Global) { g.NoTLSRedirectLocations = "" })},
		"no-tls-redirect-locations relative": {in: kv{"no-tls-redirect-locations", "a"}, bad: "absolute path"},
		"limit-rate in kilobytes":            {in: kv{"limit-rate", "100"}, want: with(func(g *config.Global) { g.LimitRate = 100 << 10 })},
		"limit-rate-after":                   {in: kv{"limit-rate-after", "0"}, want: d},
		"limit-rate negative":                {in: kv{"limit-rate", "-1"}, bad: "whole number"},
		"load-balance":                       {in: kv{"load-balance", "ewma"}, want: with(func(g *config.Global) { g.LoadBalance = config.LoadBalanceEWMA })},
		"load-balance chash":                 {in: kv{"load-balance", "chash"}, bad: "must be round_robin or ewma"},
		"use-gzip bad":                       {in: kv{"use-gzip", "yes"}, bad: "must be true or false"},
		"gzip-level":                         {in: kv{"gzip-level", "9"}, want: with(func(g *config.Global) { g.Nginx.GzipLevel = 9 })},
		"gzip-level too high":                {in: kv{"gzip-level", "10"}, bad: "between 1 and 9"},
		"gzip-level zero":                    {in: kv{"gzip-level", "0"}, bad: "between 1 and 9"},
		"gzip-min-length":                    {in: kv{"gzip-min-length", "0"}, want: with(func(g *config.Global) { g.Nginx.GzipMinLength = 0 })},
		"gzip-min-length with unit":          {in: kv{"gzip-min-length", "1k"}, bad: "whole number"},
		"gzip-types canonical":               {in: kv{"gzip-types", "Text/CSS  application/json,text/css"}, want: with(func(g *config.Global) { g.Nginx.GzipTypes = "text/css application/json" })},
		"gzip-types star":                    {in: kv{"gzip-types", "text/css *"}, want: with(func(g *config.Global) { g.Nginx.GzipTypes = "*" })},
		"gzip-types not a type":              {in: kv{"gzip-types", "text"}, bad: "not a MIME type"},
		"gzip-types variable":                {in: kv{"gzip-types", "text/$x"}, bad: "'$'"},
		"gzip-types empty":                   {in: kv{"gzip-types", " "}, bad: "is empty"},
		"ssl-protocols ordered":              {in: kv{"ssl-protocols", "tlsv1.3 TLSv1.2 TLSv1.3"}, want: with(func(g *config.Global) { g.Nginx.SSLProtocols = "TLSv1.2 TLSv1.3" })},
		"ssl-protocols only 1.3":             {in: kv{"ssl-protocols", "TLSv1.3"}, want: with(func(g *config.Global) { g.Nginx.SSLProtocols = "TLSv1.3" })},
		"ssl-protocols SSLv3":                {in: kv{"ssl-protocols", "SSLv3 TLSv1.2"}, bad: "is not one of"},
		"ssl-ciphers":                        {in: kv{"ssl-ciphers", "ECDHE+AESGCM:!aNULL, @STRENGTH"}, want: with(func(g *config.Global) { g.Nginx.SSLCiphers = "ECDHE+AESGCM:!aNULL:@STRENGTH" })},
		"ssl-ciphers quote":                  {in: kv{"ssl-ciphers", "HIGH:'x"}, bad: "contains"},
		"ssl-ciphers bad element":            {in: kv{"ssl-ciphers", "HIGH:@EVIL"}, bad: "cipher list element"},
		"ssl-ciphers combinations":           {in: kv{"ssl-ciphers", "EECDH+AESGCM:EDH+AESGCM"}, want: with(func(g *config.Global) { g.Nginx.SSLCiphers = "EECDH+AESGCM:EDH+AESGCM" })},
		"ssl-ciphers unknown beside known":   {in: kv{"ssl-ciphers", "FOO:ECDHE-RSA-AES128-GCM-SHA256"}, want: with(func(g *config.Global) { g.Nginx.SSLCiphers = "FOO:ECDHE-RSA-AES128-GCM-SHA256" })},
		"ssl-ciphers a typo alone":           {in: kv{"ssl-ciphers", "ECDHE-RSA-AES128-GCM-SHA256X"}, bad: "adds no cipher"},
		"ssl-ciphers exclusions only":        {in: kv{"ssl-ciphers", "!aNULL:-MD5"}, bad: "adds no cipher"},
		"ssl-ciphers TLS 1.3 suite":          {in: kv{"ssl-ciphers", "TLS_AES_128_GCM_SHA256"}, bad: "adds no cipher"},
		"ssl-session-cache":                  {in: kv{"ssl-session-cache", "false"}, want: with(func(g *config.Global) { g.Nginx.SSLSessionCache = false })},
		"ssl-session-cache-size":             {in: kv{"ssl-session-cache-size", "50m"}, want: with(func(g *config.Global) { g.Nginx.SSLSessionCacheSize = "50m" })},
		"ssl-session-cache-size small":       {in: kv{"ssl-session-cache-size", "8k"}, bad: "at least 32768 bytes"},
		"ssl-session-cache-size large":       {in: kv{"ssl-session-cache-size", "2g"}, bad: "at most 1g"},
		"ssl-session-timeout":                {in: kv{"ssl-session-timeout", "1h30m"}, want: with(func(g *config.Global) { g.Nginx.SSLSessionTimeout = 5400 })},
		"ssl-session-timeout seconds":        {in: kv{"ssl-session-timeout", "300"}, want: with(func(g *config.Global) { g.Nginx.SSLSessionTimeout = 300 })},
		"ssl-session-timeout ms":             {in: kv{"ssl-session-timeout", "500ms"}, bad: "whole seconds"},
		"ssl-session-timeout unit":           {in: kv{"ssl-session-timeout", "10x"}, bad: "nginx time"},
		"ssl-session-tickets":                {in: kv{"ssl-session-tickets", "true"}, want: with(func(g *config.Global) { g.Nginx.SSLSessionTickets = true })},
		"keep-alive off":                     {in: kv{"keep-alive", "0"}, want: with(func(g *config.Global) { g.Nginx.KeepAlive = 0 })},
		"keep-alive with unit":               {in: kv{"keep-alive", "75s"}, bad: "whole number"},
		"keep-alive-requests":                {in: kv{"keep-alive-requests", "100"}, want: with(func(g *config.Global) { g.Nginx.KeepAliveRequests = 100 })},
		"keep-alive-requests zero":           {in: kv{"keep-alive-requests", "0"}, bad: "between 1"},
		"upstream-keepalive-timeout":         {in: kv{"upstream-keepalive-timeout", "30"}, want: with(func(g *config.Global) { g.Nginx.UpstreamKeepaliveTimeout = 30 })},
		"upstream-keepalive-requests":        {in: kv{"upstream-keepalive-requests", "50"}, want: with(func(g *config.Global) { g.Nginx.UpstreamKeepaliveRequests = 50 })},
		"upstream-keepalive-conns off":       {in: kv{"upstream-keepalive-connections", "0"}, want: with(func(g *config.Global) { g.UpstreamKeepalive = 0 })},
		"client-header-timeout":              {in: kv{"client-header-timeout", "10"}, want: with(func(g *config.Global) { g.Nginx.ClientHeaderTimeout = 10 })},
		"client-body-timeout zero":           {in: kv{"client-body-timeout", "0"}, bad: "between 1"},
		"client-header-buffer-size":          {in: kv{"client-header-buffer-size", "2k"}, want: with(func(g *config.Global) { g.Nginx.ClientHeaderBufferSize = "2k" })},
		"client-header-buffer-size bad":      {in: kv{"client-header-buffer-size", "2kb"}, bad: "nginx size"},
		"large-client-header-buffers": {in: kv{"large-client-header-buffers", "8  16k"}, want: with(func(g *config.Global) {
			g.Nginx.LargeClientHeaderBuffers, g.Nginx.LargeClientHeaderBufferSize = 8, "16k"
		})},
		"large-client-header-buffers 1":  {in: kv{"large-client-header-buffers", "8"}, bad: "a number and a size"},
		"large-client-header-buffers s":  {in: kv{"large-client-header-buffers", "4 512"}, bad: "at least 1024"},
		"proxy-buffering":                {in: kv{"proxy-buffering", "ON"}, want: with(func(g *config.Global) { g.Nginx.ProxyBuffering = true })},
		"proxy-buffering bool":           {in: kv{"proxy-buffering", "true"}, bad: "on or off"},
		"proxy-buffer-size":              {in: kv{"proxy-buffer-size", "16k"}, want: with(func(g *config.Global) { g.Nginx.ProxyBufferSize = "16k" })},
		"proxy-buffer-size zero":         {in: kv{"proxy-buffer-size", "0"}, bad: "at least 1"},
		"proxy-connect-timeout":          {in: kv{"proxy-connect-timeout", "10"}, want: with(func(g *config.Global) { g.ProxyConnectTimeout = 10 })},
		"proxy-read-timeout unit":        {in: kv{"proxy-read-timeout", "60s"}, bad: "whole number"},
		"proxy-send-timeout zero":        {in: kv{"proxy-send-timeout", "0"}, bad: "between 1 and 86400"},
		"proxy-read-timeout a day":       {in: kv{"proxy-read-timeout", "86400"}, want: with(func(g *config.Global) { g.ProxyReadTimeout = 86400 })},
		"proxy-read-timeout over a day":  {in: kv{"proxy-read-timeout", "86401"}, bad: "between 1 and 86400"},
		"size leading zero":              {in: kv{"proxy-buffer-size", "08k"}, bad: "leading zero"},
		"size ten digits":                {in: kv{"client-header-buffer-size", "1000000000"}, bad: "9 digits"},
		"max-worker-connections small":   {in: kv{"max-worker-connections", "8"}, bad: "0 or between 16"},
		"max-worker-connections flag":    {in: kv{"max-worker-connections", "0"}, want: d},
		"proxy-body-size":                {in: kv{"proxy-body-size", "0"}, want: with(func(g *config.Global) { g.ProxyBodySize = "0" })},
		"proxy-body-size bad":            {in: kv{"proxy-body-size", "8mb"}, bad: "nginx size"},
		"use-http2":                      {in: kv{"use-http2", "false"}, want: with(func(g *config.Global) { g.Nginx.UseHTTP2 = false })},
		"http2-max-concurrent-streams":   {in: kv{"http2-max-concurrent-streams", "64"}, want: with(func(g *config.Global) { g.Nginx.HTTP2MaxConcurrentStreams = 64 })},
		"http2-max-concurrent-streams 0": {in: kv{"http2-max-concurrent-streams", "0"}, bad: "between 1"},
		"log-format-upstream json": {in: kv{"log-format-upstream", `{"t": "${time_iso8601}", "s": $status, "h": "$http_x_id", "b": "$proxy_upstream_name"}`},
			want: with(func(g *config.Global) {
				g.Nginx.LogFormatUpstream = `{"t": "${time_iso8601}", "s": $status, "h": "$http_x_id", "b": "$proxy_upstream_name"}`
			})},
		"log-format-upstream ingress-nginx variable": {in: kv{"log-format-upstream", "$remote_addr $namespace"}, bad: "$namespace is not available"},
		"log-format-stream json": {in: kv{"log-format-stream", `{"a": "$remote_addr", "s": $status, "sni": "$ssl_preread_server_name"}`},
			want: with(func(g *config.Global) {
				g.Nginx.LogFormatStream = `{"a": "$remote_addr", "s": $status, "sni": "$ssl_preread_server_name"}`
			})},
		"log-format-stream http variable":         {in: kv{"log-format-stream", "$remote_addr $request_uri"}, bad: "$request_uri is not available"},
		"log-format-stream quote":                 {in: kv{"log-format-stream", "$status ' x"}, bad: `contains '\''`},
		"stream-access-log-path":                  {in: kv{"stream-access-log-path", "/var/log/stream.log"}, want: with(func(g *config.Global) { g.Nginx.StreamAccessLogPath = "/var/log/stream.log" })},
		"stream-access-log-path relative":         {in: kv{"stream-access-log-path", "stream.log"}, bad: "absolute path"},
		"proxy-stream-timeout":                    {in: kv{"proxy-stream-timeout", "30s"}, want: with(func(g *config.Global) { g.Nginx.ProxyStreamTimeout = 30 })},
		"proxy-stream-timeout minutes":            {in: kv{"proxy-stream-timeout", "10m"}, want: d},
		"proxy-stream-responses":                  {in: kv{"proxy-stream-responses", "0"}, want: with(func(g *config.Global) { g.Nginx.ProxyStreamResponses = 0 })},
		"log-format-upstream unknown variable":    {in: kv{"log-format-upstream", "$remote_addrx"}, bad: "$remote_addrx is not available"},
		"log-format-upstream upper case":          {in: kv{"log-format-upstream", "$remote_addrX"}, bad: "lower case"},
		"log-format-upstream literal dollar":      {in: kv{"log-format-upstream", "cost $ 5"}, bad: "does not start a variable"},
		"log-format-upstream open brace":          {in: kv{"log-format-upstream", "${status"}, bad: "without its }"},
		"log-format-upstream quote":               {in: kv{"log-format-upstream", "$status ' x"}, bad: `contains '\''`},
		"log-format-upstream backslash":           {in: kv{"log-format-upstream", `$status \x`}, bad: `contains '\\'`},
		"log-format-upstream newline":             {in: kv{"log-format-upstream", "$status\n"}, bad: "control"},
		"log-format-upstream empty prefix family": {in: kv{"log-format-upstream", "$http_"}, bad: "$http_ is not available"},
		"log-format-escape-json":                  {in: kv{"log-format-escape-json", "true"}, want: with(func(g *config.Global) { g.Nginx.LogFormatEscapeJSON = true })},
		"error-log-level":                         {in: kv{"error-log-level", "warn"}, want: with(func(g *config.Global) { g.Nginx.ErrorLogLevel = "warn" })},
		"error-log-level bad":                     {in: kv{"error-log-level", "verbose"}, bad: "must be one of"},
		"disable-access-log":                      {in: kv{"disable-access-log", "true"}, want: with(func(g *config.Global) { g.Nginx.DisableAccessLog = true })},
		"access-log-path file":                    {in: kv{"access-log-path", "/var/log/ingress/access.log"}, want: with(func(g *config.Global) { g.Nginx.AccessLogPath = "/var/log/ingress/access.log" })},
		"access-log-path stdout":                  {in: kv{"access-log-path", "/dev/stdout"}, want: d},
		"access-log-path ingress-nginx default":   {in: kv{"access-log-path", "/var/log/nginx/access.log"}, want: d},
		"access-log-path stderr":                  {in: kv{"access-log-path", "/dev/stderr"}, want: with(func(g *config.Global) { g.Nginx.AccessLogPath = "/dev/stderr" })},
		"access-log-path relative":                {in: kv{"access-log-path", "logs/access.log"}, bad: "absolute path"},
		"access-log-path directive":               {in: kv{"access-log-path", "/tmp/a.log; include /etc/passwd"}, bad: "contains ';'"},
		"access-log-path variable":                {in: kv{"access-log-path", "/tmp/$host.log"}, bad: "contains '$'"},
		"access-log-path syslog":                  {in: kv{"access-log-path", "syslog:server=10.0.0.1"}, bad: "absolute path"},
		"access-log-path dot dot":                 {in: kv{"access-log-path", "/var/log/../../etc/shadow"}, bad: `".."`},
		"access-log-path device":                  {in: kv{"access-log-path", "/dev/sda"}, bad: "under /dev/"},
		"access-log-path trailing slash":          {in: kv{"access-log-path", "/var/log/"}, bad: "absolute path"},
		"access-log-path long":                    {in: kv{"access-log-path", "/" + strings.Repeat("a", 300)}, bad: "longer than"},
		"server-tokens":                           {in: kv{"server-tokens", "true"}, want: with(func(g *config.Global) { g.Nginx.ServerTokens = true })},
		"worker-processes auto":                   {in: kv{"worker-processes", "auto"}, want: with(func(g *config.Global) { g.Nginx.WorkerProcesses = "auto" })},
		"worker-processes number":                 {in: kv{"worker-processes", "4"}, want: with(func(g *config.Global) { g.Nginx.WorkerProcesses = "4" })},
		"worker-processes bad":                    {in: kv{"worker-processes", "0"}, bad: `"auto" or a number`},
		"max-worker-connections":                  {in: kv{"max-worker-connections", "1024"}, want: with(func(g *config.Global) { g.Nginx.MaxWorkerConnections = 1024 })},
		"worker-shutdown-timeout":                 {in: kv{"worker-shutdown-timeout", "240s"}, want: with(func(g *config.Global) { g.Nginx.WorkerShutdownTimeout = 240 })},
		"worker-shutdown-timeout bad":             {in: kv{"worker-shutdown-timeout", "-1s"}, bad: "nginx time"},
		"hsts":                                    {in: kv{"hsts", "false"}, want: with(func(g *config.Global) { g.Nginx.HSTS = false })},
		"hsts-max-age":                            {in: kv{"hsts-max-age", "600"}, want: with(func(g *config.Global) { g.Nginx.HSTSMaxAge = 600 })},
		"hsts-max-age unit":                       {in: kv{"hsts-max-age", "1y"}, bad: "whole number"},
		"hsts-include-subdomains":                 {in: kv{"hsts-include-subdomains", "false"}, want: with(func(g *config.Global) { g.Nginx.HSTSIncludeSubdomains = false })},
		"hsts-preload":                            {in: kv{"hsts-preload", "true"}, want: with(func(g *config.Global) { g.Nginx.HSTSPreload = true })},
		"force-ssl-redirect":                      {in: kv{"force-ssl-redirect", "true"}, want: with(func(g *config.Global) { g.ForceSSLRedirect = true })},
		"ssl-prefer-server-ciphers is not a key":  {in: kv{"ssl-prefer-server-ciphers", "false"}, bad: "not supported"},
		// Brotli: the first key sets the others to ingress-nginx's defaults.
		"enable-brotli": {in: kv{"enable-brotli", "true"}, want: with(func(g *config.Global) {
			g.Nginx.Brotli = config.DefaultBrotli()
			g.Nginx.Brotli.Enable = true
		})},
		"brotli-level zero": {in: kv{"brotli-level", "0"}, want: with(func(g *config.Global) {
			g.Nginx.Brotli = config.DefaultBrotli()
			g.Nginx.Brotli.Level = 0
		})},
		"brotli-level too high": {in: kv{"brotli-level", "12"}, bad: "between 0 and 11"},
		"brotli-min-length": {in: kv{"brotli-min-length", "100"}, want: with(func(g *config.Global) {
			g.Nginx.Brotli = config.DefaultBrotli()
			g.Nginx.Brotli.MinLength = 100
		})},
		"brotli-min-length negative": {in: kv{"brotli-min-length", "-1"}, bad: "whole number"},
		"brotli-types canonical": {in: kv{"brotli-types", "Text/CSS, application/json"}, want: with(func(g *config.Global) {
			g.Nginx.Brotli = config.DefaultBrotli()
			g.Nginx.Brotli.Types = "text/css application/json"
		})},
		"brotli-types a directive":  {in: kv{"brotli-types", "text/css; load_module /tmp/x.so"}, bad: "contains ';'"},
		"brotli-types a block":      {in: kv{"brotli-types", "text/css}"}, bad: "'}'"},
		"brotli-types a newline":    {in: kv{"brotli-types", "text/css\nbrotli off"}, bad: "newline"},
		"enable-brotli bad":         {in: kv{"enable-brotli", "on"}, bad: "must be true or false"},
		"use-geoip2":                {in: kv{"use-geoip2", "true"}, want: with(func(g *config.Global) { g.Nginx.GeoIP2.Enable = true })},
		"use-geoip2 bad":            {in: kv{"use-geoip2", "1;"}, bad: "contains ';'"},
		"geoip2-autoreload":         {in: kv{"geoip2-autoreload-in-minutes", "30"}, want: with(func(g *config.Global) { g.Nginx.GeoIP2.AutoReloadMinutes = 30 })},
		"geoip2-autoreload a unit":  {in: kv{"geoip2-autoreload-in-minutes", "30m"}, bad: "whole number"},
		"geoip2-autoreload too big": {in: kv{"geoip2-autoreload-in-minutes", "100000"}, bad: "between 0 and 10080"},
		"log-format-upstream with geoip2": {in: kv{"log-format-upstream", "$remote_addr ${geoip2_city} $geoip2_is_tor_exit_node"},
			want: with(func(g *config.Global) {
				g.Nginx.LogFormatUpstream = "$remote_addr ${geoip2_city} $geoip2_is_tor_exit_node"
			})},
		"log-format-upstream with an unknown geoip2 variable": {in: kv{"log-format-upstream", "$geoip2_planet"}, bad: "not available"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, problems := parseGlobal(fixtures.ConfigMap("ingress", "cfg", tc.in[0], tc.in[1]))
			if tc.bad != "" {
				check.Equal(t, "global", got, d)
				if len(problems) != 1 || !strings.Contains(problems[0], tc.bad) || !strings.HasSuffix(problems[0], "default kept") {
					t.Errorf("problems %q, want one with %q, default kept", problems, tc.bad)
				}
				return
			}
			if len(problems) != 0 {
				t.Fatalf("problems %q", problems)
			}
			check.Equal(t, "global", got, tc.want)
		})
	}
}

// TestGlobalDefaults: each key set to ingress-nginx v1.15's documented
// default (configmap.md, in its format) gives DefaultGlobal.
func TestGlobalDefaults(t *testing.T) {
	defaults := map[string]string{
		"use-gzip": "false", "gzip-level": "1", "gzip-min-length": "256", "gzip-types": config.DefaultGlobal().Nginx.GzipTypes,
		"ssl-protocols": "TLSv1.2 TLSv1.3", "ssl-ciphers": config.DefaultGlobal().Nginx.SSLCiphers, "ssl-session-cache": "true",
		"ssl-session-cache-size": "10m", "ssl-session-timeout": "10m", "ssl-session-tickets": "false",
		"keep-alive": "75", "keep-alive-requests": "1000", "upstream-keepalive-connections": "320",
		"upstream-keepalive-timeout": "60", "upstream-keepalive-requests": "10000", "client-header-timeout": "60",
		"client-body-timeout": "60", "client-header-buffer-size": "1k", "large-client-header-buffers": "4 8k",
		"proxy-buffering": "off", "proxy-buffer-size": "4k", "proxy-connect-timeout": "5", "proxy-read-timeout": "60",
		"proxy-send-timeout": "60", "proxy-body-size": "1m", "use-http2": "true", "http2-max-concurrent-streams": "128",
		"log-format-escape-json": "false", "server-tokens": "false", "hsts": "true", "hsts-max-age": "31536000",
		"hsts-include-subdomains": "true", "hsts-preload": "false", "force-ssl-redirect": "false", "ssl-redirect": "true",
	}
	for k, v := range defaults {
		t.Run(k, func(t *testing.T) {
			got, problems := parseGlobal(fixtures.ConfigMap("ingress", "cfg", k, v))
			if len(problems) > 0 {
				t.Fatalf("problems %q", problems)
			}
			check.Equal(t, "global", got, config.DefaultGlobal())
		})
	}
	// Keys whose ingress-nginx default is the syncer's flag here.
	for k, v := range map[string]string{"error-log-level": "notice", "worker-shutdown-timeout": "240s", "max-worker-connections": "16384"} {
		if _, problems := parseGlobal(fixtures.ConfigMap("ingress", "cfg", k, v)); len(problems) > 0 {
			t.Errorf("%s=%s: %q", k, v, problems)
		}
	}
}
