package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"net/url"
	"os"
	"strings"
	"testing"
)

// xss is the query of a reflected XSS attempt, which the Core Rule Set's
// 941 rules detect.
var xss = "?q=" + url.QueryEscape("<script>alert(1)</script>")

func wafLoc(path string, m *config.ModSecurity) config.Location {
	return settingsLoc(path, "app", config.LocationSettings{ModSecurity: m})
}

// TestModSecurity: the Core Rule Set with SecRuleEngine On answers 403 to
// an XSS attempt; DetectionOnly serves it and logs the match; a route
// without ModSecurity serves it untouched; removing the XSS rules by id
// lets it through; a profile nginx.conf cannot hold, or an unavailable
// one, answers 503. Turning ModSecurity on for a route whose profile
// nginx.conf holds does not reload; a new profile does.
func TestModSecurity(t *testing.T) {
	app := startEcho(t, "app")
	on := &config.ModSecurity{Engine: "On", CRS: true}
	detect := &config.ModSecurity{Engine: "DetectionOnly", CRS: true, TransactionID: "$request_id"}
	removed := &config.ModSecurity{Engine: "On", CRS: true, RemoveByID: []string{"941000-941999"}}
	servers := func(extra ...config.Location) []config.Server {
		locs := append([]config.Location{wafLoc("/block", on), wafLoc("/detect", detect), wafLoc("/removed", removed),
			prefixLoc("/plain", "app"), wafLoc("/closed", &config.ModSecurity{Engine: "On", Unavailable: true})}, extra...)
		return []config.Server{serverOf("waf.test", locs...)}
	}
	h := startNginx(t, configOf("waf-1", servers(), backendOf("app", app)), func(o *Options) {
		// nginx -t parses the Core Rule Set once per profile: on a loaded
		// machine that takes longer than the harness's bound.
		o.ErrorLogLevel, o.ReloadTimeout = "info", 2*testWait
	})

	for _, c := range []struct {
		name, path string
		status     int
	}{
		{"blocked with SecRuleEngine On", "/block", 403},
		{"served with DetectionOnly", "/detect", 200},
		{"served without ModSecurity", "/plain", 200},
		{"served with the XSS rules removed", "/removed", 200},
		{"unavailable answers 503", "/closed", 503},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := h.mustGet("http://waf.test" + c.path + xss)
			if r.Status != c.status {
				t.Fatalf("GET %s = %d, want %d", c.path, r.Status, c.status)
			}
			if c.status == 200 && (r.Reply.Backend != "app" || !strings.Contains(r.Reply.Query, "q=%3Cscript%3E")) {
				t.Errorf("GET %s reached %q with %q, want the app with the query untouched", c.path, r.Reply.Backend, r.Reply.Query)
			}
		})
	}
	t.Run("a harmless request passes the blocking route", func(t *testing.T) {
		checkServed(t, h, "http://waf.test/block?q=hello", 200, "app")
	})
	t.Run("DetectionOnly logs the match", func(t *testing.T) {
		waitFor(t, "the ModSecurity warning in the error log", func() bool {
			data, _ := os.ReadFile(h.opts.errorLogPath())
			return strings.Contains(string(data), "ModSecurity: Warning") && strings.Contains(string(data), "/detect")
		})
	})

	ctx := context.Background()
	workers := workerPIDs(t, h.proc.Pid())
	t.Run("a route moving to a held profile does not reload", func(t *testing.T) {
		next := configOf("waf-2", servers(wafLoc("/more", on)), backendOf("app", app))
		if err := h.reload(ctx, next); err != nil {
			t.Fatal(err)
		}
		checkNotReloaded(t, h, workers)
		if r := h.mustGet("http://waf.test/more" + xss); r.Status != 403 {
			t.Errorf("GET /more = %d, want 403", r.Status)
		}
	})
	t.Run("a new profile reloads", func(t *testing.T) {
		own := &config.ModSecurity{Engine: "On", CRS: true, RemoveByTag: []string{"attack-xss"}}
		next := configOf("waf-3", servers(wafLoc("/more", on), wafLoc("/tagged", own)), backendOf("app", app))
		if err := h.reload(ctx, next); err != nil {
			t.Fatal(err)
		}
		if h.app.LastReload().Skipped {
			t.Errorf("a new profile did not reload: %+v", h.app.LastReload())
		}
		checkServed(t, h, "http://waf.test/tagged"+xss, 200, "app")
	})
}
