package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"fmt"
	"io"
	"strings"
	"testing"
)

// getBody sends GET url and returns the status, the body and X-App (set by
// statusBackend) of the answer.
func getBody(t *testing.T, h *harness, url string) (int, string, string) {
	t.Helper()
	resp, err := h.http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), resp.Header.Get("X-App")
}

// TestCustomErrorsOwnList: a route's own custom-http-errors intercept only
// the listed codes, as ingress-nginx's error_page per listed code
// (annotations/customhttperrors.go): the backend's answer with a code the
// route does not list reaches the client unchanged, body and headers
// included, for every proxy location variant; a listed code goes to the
// error backend. A new list reloads nginx once; a list nginx.conf already
// holds does not.
func TestCustomErrorsOwnList(t *testing.T) {
	app := startHTTPTest(t, statusBackend(), false, false)
	pages := startHTTPTest(t, errorPages(), false, false)
	own := func(p *config.ProxySettings, codes ...int) config.LocationSettings {
		return config.LocationSettings{Proxy: p, Errors: &config.CustomErrors{Codes: codes, Backend: "pages", Service: "app", ServicePort: "80"}}
	}
	cfg := configOf("own-1", []config.Server{serverOf("own.test",
		settingsLoc("/a", "app", own(nil, 404, 503)),
		settingsLoc("/unbuffered", "app", own(&config.ProxySettings{Buffering: "off", HTTPVersion: "1.0"}, 404, 503)),
		settingsLoc("/other", "app", own(nil, 403)),
	)}, backendAt("app", app), backendAt("pages", pages))
	cfg.Global.CustomHTTPErrors = "500"
	h := startNginx(t, cfg, nil)

	passes := func(t *testing.T, url string, code int) {
		t.Helper()
		status, body, xapp := getBody(t, h, url)
		if want := fmt.Sprintf("app %d", code); status != code || body != want || xapp != "1" {
			t.Errorf("GET %s = %d %q (X-App %q), want the backend's %d %q", url, status, body, xapp, code, want)
		}
	}
	intercepted := func(t *testing.T, url string, code int) {
		t.Helper()
		resp, r := send(t, h, "GET", url, nil)
		if resp.StatusCode != code || r.Backend != "errors" || r.Headers.Get("X-Code") != fmt.Sprint(code) {
			t.Errorf("GET %s = %d from %q (X-Code %q), want %d from the error backend", url, resp.StatusCode, r.Backend, r.Headers.Get("X-Code"), code)
		}
	}
	for _, path := range []string{"/a", "/unbuffered"} {
		t.Run(path, func(t *testing.T) {
			for _, code := range []int{400, 404, 500, 502, 503} {
				url := fmt.Sprintf("http://own.test%s?status=%d", path, code)
				if code == 404 || code == 503 {
					intercepted(t, url, code)
				} else {
					passes(t, url, code)
				}
			}
		})
	}
	t.Run("another list on the same nginx.conf", func(t *testing.T) {
		passes(t, "http://own.test/other?status=404", 404)
		intercepted(t, "http://own.test/other?status=403", 403)
	})

	ctx := context.Background()
	next := configOf("own-2", []config.Server{serverOf("own.test",
		settingsLoc("/a", "app", own(nil, 404, 503)),
		settingsLoc("/new", "app", own(nil, 410)),
	)}, backendAt("app", app), backendAt("pages", pages))
	next.Global = cfg.Global
	t.Run("a new list reloads", func(t *testing.T) {
		reloaded, err := applyDiff(ctx, h.app, next)
		if err != nil || !reloaded {
			t.Fatalf("apply: reloaded %v, %v; want a reload", reloaded, err)
		}
		passes(t, "http://own.test/new?status=404", 404)
		intercepted(t, "http://own.test/new?status=410", 410)
	})
	t.Run("a list nginx.conf holds does not reload", func(t *testing.T) {
		again := configOf("own-3", []config.Server{serverOf("own.test",
			settingsLoc("/b", "app", own(nil, 410)),
		)}, backendAt("app", app), backendAt("pages", pages))
		again.Global = cfg.Global
		workers := workerPIDs(t, h.proc.Pid())
		if reloaded, err := applyDiff(ctx, h.app, again); err != nil || reloaded {
			t.Fatalf("apply: reloaded %v, %v; want no reload", reloaded, err)
		}
		checkNotReloaded(t, h, workers)
		passes(t, "http://own.test/b?status=404", 404)
		intercepted(t, "http://own.test/b?status=410", 410)
	})
}

// TestErrorSetsOf: the distinct lists of the routes that intercept with
// their own codes, sorted and bounded; the ConfigMap's list, routes that do
// not intercept and routes without codes make none.
func TestErrorSetsOf(t *testing.T) {
	loc := func(e config.CustomErrors) config.Location {
		return settingsLoc("/", "app", config.LocationSettings{Errors: &e})
	}
	cfg := configOf("sets", []config.Server{
		serverOf("a.test", loc(config.CustomErrors{Codes: []int{404, 503}}), loc(config.CustomErrors{Codes: []int{500}, Global: true})),
		serverOf("b.test", loc(config.CustomErrors{Codes: []int{404, 503}}), loc(config.CustomErrors{Codes: []int{403}, NoIntercept: true}),
			loc(config.CustomErrors{Fallback: true, Backend: "x"}), loc(config.CustomErrors{Codes: []int{401}})),
	})
	got := errorSetsOf(cfg.Servers)
	if len(got) != 2 || got[0].Codes != "401" || got[1].Codes != "404,503" || !errorSetNameRe.MatchString(got[0].Name) || got[0].Name == got[1].Name {
		t.Fatalf("errorSetsOf = %+v, want 401 and 404,503 with distinct names", got)
	}
	var many []config.Location
	for c := 400; c < 400+maxErrorSets+5; c++ {
		many = append(many, loc(config.CustomErrors{Codes: []int{c}}))
	}
	if n := len(errorSetsOf([]config.Server{serverOf("c.test", many...)})); n != maxErrorSets {
		t.Fatalf("%d sets, want at most %d", n, maxErrorSets)
	}
}

// TestErrorSetLocationsRendered: each set copies the intercepting proxy
// locations, with an error_page of its codes only.
func TestErrorSetLocationsRendered(t *testing.T) {
	r, err := NewRenderer(testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg := configOf("render", []config.Server{serverOf("a.test",
		settingsLoc("/", "app", config.LocationSettings{Errors: &config.CustomErrors{Codes: []int{404, 503}}}))})
	conf, err := r.Render(cfg)
	if err != nil {
		t.Fatal(err)
	}
	name := errorSetsOf(cfg.Servers)[0].Name
	text := string(conf)
	for _, want := range []string{
		"location @http_b1_r1_v11_" + name + " {", "location @https_b0_r0_v10_" + name + " {",
		"location @grpc_" + name + " {", "location @grpcs_" + name + " {",
		"error_page 404 503 = @custom_error;", `error_sets = {["404\044503"] = "` + name + `"}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("nginx.conf lacks %q", want)
		}
	}
	if n := strings.Count(text, "_"+name+" {"); n != 18 {
		t.Errorf("%d locations of the set, want 18", n)
	}
}

// BenchmarkErrorSetsOf: the scan of a whole Configuration for the error
// code sets (a render, or an Apply after a failed one; otherwise Apply
// scans only the changed servers), over 10k hosts of 2 routes, one in ten
// with a list of its own.
func BenchmarkErrorSetsOf(b *testing.B) {
	servers := make([]config.Server, 10000)
	for i := range servers {
		st := config.LocationSettings{}
		if i%10 == 0 {
			st.Errors = &config.CustomErrors{Codes: []int{404, 500 + (i/10)%8}}
		}
		servers[i] = serverOf(fmt.Sprintf("h%d.test", i), settingsLoc("/", "app", st), settingsLoc("/api", "app", config.LocationSettings{}))
	}
	cfg := configOf("bench", servers)
	b.ResetTimer()
	for b.Loop() {
		if len(errorSetsOf(cfg.Servers)) != 8 {
			b.Fatal("want 8 sets")
		}
	}
}
