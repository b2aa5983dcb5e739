package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"fmt"
	"net"
	"strconv"
	"strings"
)

// tuningView is what nginx.conf holds of config.TuningSettings; every
// field is empty while the ConfigMap sets none of its keys, so that
// nginx.conf and its checksum stay as they were.
type tuningView struct {
	// MainDirectives and EventsDirectives go into the main and events
	// contexts; the http ones are added to view.HTTPDirectives.
	MainDirectives   []string `json:",omitempty"`
	EventsDirectives []string `json:",omitempty"`
	// DefaultType: "" is text/plain; VariablesHashMaxSize 0 is 2048.
	DefaultType          string `json:",omitempty"`
	VariablesHashMaxSize int    `json:",omitempty"`
	// NonIdempotent adds non_idempotent to proxy_next_upstream.
	NonIdempotent bool `json:",omitempty"`
	// ReusePort adds reuseport to the public listeners.
	ReusePort bool `json:",omitempty"`
	// SkipURLs are the quoted request URIs the access log leaves out;
	// AccessLogParams the access_log parameters, with a leading space.
	SkipURLs        []string `json:",omitempty"`
	AccessLogParams string   `json:",omitempty"`
}

// setTuning validates and renders n.Tuning (after setNginx and
// setAccessLog: it may replace the access log's destination).
func (v *view) setTuning(n *config.NginxSettings) error {
	t := &n.Tuning
	if *t == (config.TuningSettings{}) {
		return nil
	}
	if err := t.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidValue, err)
	}
	v.MainDirectives = mainTuning(t)
	if p := t.ErrorLogPath; p != "" { // beside stderr, which the syncer reads
		if p != config.AccessLogStdout { // else a file, checked as the access log's
			var err error
			if p, err = accessLogPath(p); err != nil {
				return err
			}
		}
		v.MainDirectives = append(v.MainDirectives, "error_log "+p+" "+v.ErrorLogLevel)
	}
	v.EventsDirectives = eventsTuning(t)
	v.HTTPDirectives = append(v.HTTPDirectives, httpTuning(t)...)
	v.DefaultType, v.NonIdempotent, v.ReusePort = t.DefaultType, t.RetryNonIdempotent, t.ReusePort == "on"
	v.VariablesHashMaxSize = t.VariablesHashMaxSize
	for _, u := range splitNonEmpty(t.SkipAccessLogURLs) {
		v.SkipURLs = append(v.SkipURLs, `"`+u+`"`)
	}
	if t.HTTPAccessLogPath != "" {
		p, err := accessLogPath(t.HTTPAccessLogPath)
		if err != nil {
			return err
		}
		v.AccessLogPath = p
	}
	if t.AccessLogParams != "" {
		v.AccessLogParams = " " + t.AccessLogParams
	}
	if s := syslogServer(t); s != "" {
		v.AccessLogPath, v.AccessLogParams = s, ""
		v.HTTPDirectives = append(v.HTTPDirectives, "error_log "+s+" "+v.ErrorLogLevel)
	} else if t.Syslog {
		v.Notes = append(v.Notes, "enable-syslog: no syslog-host, the logs stay where they were")
	}
	return nil
}

// syslogServer is the syslog destination of the logs, or "".
func syslogServer(t *config.TuningSettings) string {
	if !t.Syslog || t.SyslogHost == "" {
		return ""
	}
	port := t.SyslogPort
	if port == 0 {
		port = 514
	}
	return "syslog:server=" + net.JoinHostPort(t.SyslogHost, strconv.Itoa(port))
}

func mainTuning(t *config.TuningSettings) []string {
	var out []string
	if t.WorkerCPUAffinity != "" {
		out = append(out, "worker_cpu_affinity "+t.WorkerCPUAffinity)
	}
	if t.MaxWorkerOpenFiles != 0 {
		out = append(out, "worker_rlimit_nofile "+strconv.Itoa(t.MaxWorkerOpenFiles))
	}
	return out
}

func eventsTuning(t *config.TuningSettings) []string {
	var out []string
	if t.MultiAccept != "" {
		out = append(out, "multi_accept "+t.MultiAccept)
	}
	for _, c := range splitNonEmpty(t.DebugConnections) {
		out = append(out, "debug_connection "+c)
	}
	return out
}

func httpTuning(t *config.TuningSettings) []string {
	var out []string
	if t.UnderscoresInHeaders != "" {
		out = append(out, "underscores_in_headers "+t.UnderscoresInHeaders)
	}
	if t.IgnoreInvalidHeaders != "" {
		out = append(out, "ignore_invalid_headers "+t.IgnoreInvalidHeaders)
	}
	if t.SSLECDHCurve != "" {
		out = append(out, "ssl_ecdh_curve "+t.SSLECDHCurve)
	}
	if s := t.SSLBufferSize; s != "" {
		out = append(out, "ssl_buffer_size "+string(s))
	}
	if t.AioWrite == "on" {
		out = append(out, "aio threads", "aio_write on")
	}
	for _, h := range t.HashSizes() {
		if d, n := h.Directive(); n != 0 && d != "variables_hash_max_size" {
			out = append(out, d+" "+strconv.Itoa(n))
		}
	}
	return out
}

// splitNonEmpty splits a list joined by commas; "" is none.
func splitNonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// reusePort adds reuseport to the public server's listeners.
func (v *view) reusePort() {
	if !v.ReusePort {
		return
	}
	for i := range v.Listen {
		v.Listen[i] += " reuseport"
	}
}
