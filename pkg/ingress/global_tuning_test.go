package ingress

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/check"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"strings"
	"testing"
)

// TestTuningKeys parses each tuning key alone: valid forms give the
// canonical field, invalid forms keep the default with a reason.
func TestTuningKeys(t *testing.T) {
	type kv = [2]string
	with := func(f func(t *config.TuningSettings)) config.TuningSettings {
		var ts config.TuningSettings
		f(&ts)
		return ts
	}
	tests := map[string]struct {
		in   kv
		want config.TuningSettings // ignored when bad
		bad  string                // part of the reason
	}{
		"underscores on":          {in: kv{"enable-underscores-in-headers", "true"}, want: with(func(t *config.TuningSettings) { t.UnderscoresInHeaders = "on" })},
		"ignore invalid off":      {in: kv{"ignore-invalid-headers", "false"}, want: with(func(t *config.TuningSettings) { t.IgnoreInvalidHeaders = "off" })},
		"underscores yes":         {in: kv{"enable-underscores-in-headers", "yes"}, bad: "true or false"},
		"http2-max-field-size":    {in: kv{"http2-max-field-size", "4k"}, want: with(func(t *config.TuningSettings) { t.HTTP2MaxFieldSize = "4k" })},
		"http2-max-requests":      {in: kv{"http2-max-requests", "1000"}, want: with(func(t *config.TuningSettings) { t.HTTP2MaxRequests = 1000 })},
		"http2-max-header-size 0": {in: kv{"http2-max-header-size", "0"}, bad: "at least 1"},
		"ecdh auto":               {in: kv{"ssl-ecdh-curve", "auto"}, want: with(func(t *config.TuningSettings) { t.SSLECDHCurve = "auto" })},
		"ecdh list":               {in: kv{"ssl-ecdh-curve", "X25519:secp384r1"}, want: with(func(t *config.TuningSettings) { t.SSLECDHCurve = "X25519:secp384r1" })},
		"ecdh unknown":            {in: kv{"ssl-ecdh-curve", "X25519:brainpool"}, bad: "unknown curve"},
		"ssl-buffer-size":         {in: kv{"ssl-buffer-size", "4k"}, want: with(func(t *config.TuningSettings) { t.SSLBufferSize = "4k" })},
		"ssl-buffer-size too big": {in: kv{"ssl-buffer-size", "32k"}, bad: "at most 16k"},
		"retry-non-idempotent":    {in: kv{"retry-non-idempotent", "true"}, want: with(func(t *config.TuningSettings) { t.RetryNonIdempotent = true })},
		"default-type":            {in: kv{"default-type", "Text/HTML"}, want: with(func(t *config.TuningSettings) { t.DefaultType = "text/html" })},
		"default-type params":     {in: kv{"default-type", "text/html charset=utf-8"}, bad: "MIME type"},
		"skip urls":               {in: kv{"skip-access-log-urls", "/healthz, /ping?x=1"}, want: with(func(t *config.TuningSettings) { t.SkipAccessLogURLs = "/healthz,/ping?x=1" })},
		"skip url relative":       {in: kv{"skip-access-log-urls", "healthz"}, bad: "must be a path"},
		"skip url quote":          {in: kv{"skip-access-log-urls", `/a"b`}, bad: "contains"},
		"skip url variable":       {in: kv{"skip-access-log-urls", `/$uri`}, bad: "'$'"},
		"log params":              {in: kv{"access-log-params", "buffer=16K flush=1m gzip"}, want: with(func(t *config.TuningSettings) { t.AccessLogParams = "buffer=16k flush=60s gzip" })},
		"log params gzip level":   {in: kv{"access-log-params", "gzip=9"}, want: with(func(t *config.TuningSettings) { t.AccessLogParams = "gzip=9" })},
		"log params if":           {in: kv{"access-log-params", "if=$x"}, bad: "'$'"},
		"log params unknown":      {in: kv{"access-log-params", "open=on"}, bad: "invalid access log parameter"},
		"log params flush alone":  {in: kv{"access-log-params", "flush=5s"}, bad: "flush needs buffer"},
		"log params twice":        {in: kv{"access-log-params", "gzip gzip=2"}, bad: "each once"},
		"http access log":         {in: kv{"http-access-log-path", "/var/log/http.log"}, want: with(func(t *config.TuningSettings) { t.HTTPAccessLogPath = "/var/log/http.log" })},
		"error log default":       {in: kv{"error-log-path", "/var/log/nginx/error.log"}, want: with(func(*config.TuningSettings) {})},
		"error log stdout":        {in: kv{"error-log-path", "/dev/stdout"}, want: with(func(t *config.TuningSettings) { t.ErrorLogPath = "/dev/stdout" })},
		"error log file":          {in: kv{"error-log-path", "/var/log/err.log"}, want: with(func(t *config.TuningSettings) { t.ErrorLogPath = "/var/log/err.log" })},
		"error log syslog":        {in: kv{"error-log-path", "syslog:server=x"}, bad: "absolute path"},
		"error log proc":          {in: kv{"error-log-path", "/proc/self/fd/1"}, bad: "must not be under /proc/"},
		"syslog":                  {in: kv{"enable-syslog", "true"}, want: with(func(t *config.TuningSettings) { t.Syslog = true })},
		"syslog host":             {in: kv{"syslog-host", "Syslog.Example.com"}, want: with(func(t *config.TuningSettings) { t.SyslogHost = "syslog.example.com" })},
		"syslog host ipv6":        {in: kv{"syslog-host", "fd00::1"}, want: with(func(t *config.TuningSettings) { t.SyslogHost = "fd00::1" })},
		"syslog host with port":   {in: kv{"syslog-host", "a.example.com:514"}, bad: "IP address or a DNS name"},
		"syslog port":             {in: kv{"syslog-port", "1514"}, want: with(func(t *config.TuningSettings) { t.SyslogPort = 1514 })},
		"syslog port 0":           {in: kv{"syslog-port", "0"}, bad: "between 1 and 65535"},
		"reuse-port":              {in: kv{"reuse-port", "true"}, want: with(func(t *config.TuningSettings) { t.ReusePort = "on" })},
		"cpu affinity auto":       {in: kv{"worker-cpu-affinity", "auto"}, want: with(func(t *config.TuningSettings) { t.WorkerCPUAffinity = "auto" })},
		"cpu affinity auto mask":  {in: kv{"worker-cpu-affinity", "auto  0101"}, want: with(func(t *config.TuningSettings) { t.WorkerCPUAffinity = "auto 0101" })},
		"cpu affinity masks":      {in: kv{"worker-cpu-affinity", "01 10"}, want: with(func(t *config.TuningSettings) { t.WorkerCPUAffinity = "01 10" })},
		"cpu affinity bad":        {in: kv{"worker-cpu-affinity", "0x3"}, bad: "masks of 0 and 1"},
		"open files":              {in: kv{"max-worker-open-files", "65536"}, want: with(func(t *config.TuningSettings) { t.MaxWorkerOpenFiles = 65536 })},
		"open files zero":         {in: kv{"max-worker-open-files", "0"}, want: with(func(*config.TuningSettings) {})},
		"open files too many":     {in: kv{"max-worker-open-files", "99999999"}, bad: "between 0 and"},
		"multi accept off":        {in: kv{"enable-multi-accept", "false"}, want: with(func(t *config.TuningSettings) { t.MultiAccept = "off" })},
		"aio write":               {in: kv{"enable-aio-write", "true"}, want: with(func(t *config.TuningSettings) { t.AioWrite = "on" })},
		"debug connections":       {in: kv{"debug-connections", "10.0.0.1, 192.168.0.0/24,FD00::/8"}, want: with(func(t *config.TuningSettings) { t.DebugConnections = "10.0.0.1,192.168.0.0/24,fd00::/8" })},
		"debug connections name":  {in: kv{"debug-connections", "example.com"}, bad: "IP address or CIDR"},
		"server names bucket":     {in: kv{"server-name-hash-bucket-size", "128"}, want: with(func(t *config.TuningSettings) { t.ServerNamesHashBucketSize = 128 })},
		"server names max":        {in: kv{"server-name-hash-max-size", "1024"}, want: with(func(t *config.TuningSettings) { t.ServerNamesHashMaxSize = 1024 })},
		"map bucket":              {in: kv{"map-hash-bucket-size", "64"}, want: with(func(t *config.TuningSettings) { t.MapHashBucketSize = 64 })},
		"proxy headers bucket":    {in: kv{"proxy-headers-hash-bucket-size", "128"}, want: with(func(t *config.TuningSettings) { t.ProxyHeadersHashBucketSize = 128 })},
		"proxy headers max":       {in: kv{"proxy-headers-hash-max-size", "1024"}, want: with(func(t *config.TuningSettings) { t.ProxyHeadersHashMaxSize = 1024 })},
		"variables bucket":        {in: kv{"variables-hash-bucket-size", "256"}, want: with(func(t *config.TuningSettings) { t.VariablesHashBucketSize = 256 })},
		"variables max":           {in: kv{"variables-hash-max-size", "4096"}, want: with(func(t *config.TuningSettings) { t.VariablesHashMaxSize = 4096 })},
		"variables max too small": {in: kv{"variables-hash-max-size", "1024"}, bad: "between 2048 and"},
		"proxy headers bucket 32": {in: kv{"proxy-headers-hash-bucket-size", "32"}, bad: "between 64 and"},
		"bucket not a number":     {in: kv{"map-hash-bucket-size", "64k"}, bad: "must be a number"},
		"serial reloads":          {in: kv{"enable-serial-reloads", "true"}, want: with(func(*config.TuningSettings) {})},
		"serial reloads bad":      {in: kv{"enable-serial-reloads", "on"}, bad: "true or false"},
		"risk level":              {in: kv{"annotations-risk-level", "Medium"}, want: with(func(*config.TuningSettings) {})},
		"risk level bad":          {in: kv{"annotations-risk-level", "medium"}, bad: "Critical, High, Medium or Low"},
		"word blocklist":          {in: kv{"annotation-value-word-blocklist", "load_module, lua_package"}, want: with(func(*config.TuningSettings) {})},
		"word blocklist empty":    {in: kv{"annotation-value-word-blocklist", ""}, want: with(func(*config.TuningSettings) {})},
		"strict path type":        {in: kv{"strict-validate-path-type", "false"}, want: with(func(*config.TuningSettings) {})},
		"cross namespace":         {in: kv{"allow-cross-namespace-resources", "true"}, want: with(func(*config.TuningSettings) {})},
		"cross namespace bad":     {in: kv{"allow-cross-namespace-resources", "maybe"}, bad: "true or false"},
		"jaeger no effect":        {in: kv{"jaeger-collector-host", "jaeger.example.com"}, want: with(func(*config.TuningSettings) {})},
		"use-geoip no effect":     {in: kv{"use-geoip", "true"}, want: with(func(*config.TuningSettings) {})},
		"bind-address no effect":  {in: kv{"bind-address", "10.0.0.1"}, want: with(func(*config.TuningSettings) {})},
		"no effect still checked": {in: kv{"jaeger-service-name", "a;b"}, bad: "contains"},
	}
	d := config.DefaultGlobal()
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
			want := d
			want.Nginx.Tuning = tc.want
			check.Equal(t, "global", got, want)
		})
	}
}
