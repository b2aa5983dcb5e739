package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// statusBackend answers ?status=N with N and the body "app N"; ?hang
// waits until nginx gives up on it.
func statusBackend() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("hang") {
			<-r.Context().Done()
			return
		}
		code, err := strconv.Atoi(r.URL.Query().Get("status"))
		if err != nil {
			code = 200
		}
		w.Header().Set("X-App", "1")
		w.WriteHeader(code)
		_, _ = w.Write([]byte("app " + strconv.Itoa(code)))
	})
}

// errorPages answers as the custom error pages backend of ingress-nginx's
// docs: the status of X-Code, and (here) the request as JSON.
func errorPages() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reply := reflectorReply("errors", w, r)
		code, err := strconv.Atoi(r.Header.Get("X-Code"))
		if err != nil {
			code = 200
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(reply)
	})
}

// TestCustomErrors: custom-http-errors, default-backend and
// disable-proxy-intercept-errors as ingress-nginx's e2e tests
// (customhttperrors.go, default_backend.go, disableproxyintercepterrors.go)
// and its custom error location describe them.
func TestCustomErrors(t *testing.T) {
	app := startHTTPTest(t, statusBackend(), false, false)
	pages := startHTTPTest(t, errorPages(), false, false)
	errs := func(e config.CustomErrors) config.LocationSettings {
		e.Service, e.ServicePort = "app", "80"
		return config.LocationSettings{Errors: &e}
	}
	withBody := errs(config.CustomErrors{Codes: []int{403, 413}, Backend: "pages"})
	withBody.ProxyBodySize, withBody.AllowSourceRange = "1k", []string{"0.0.0.0/0", "::/0"}
	denied := errs(config.CustomErrors{Codes: []int{403}, Backend: "pages"})
	denied.AllowSourceRange = []string{"10.0.0.0/8"}
	slow := errs(config.CustomErrors{Codes: []int{504}, Backend: "pages"})
	slow.ProxyReadTimeout = 1
	cfg := configOf("errors-1", []config.Server{serverOf("err.test",
		settingsLoc("/app", "app", errs(config.CustomErrors{Codes: []int{404, 503}, Backend: "pages"})),
		settingsLoc("/pass", "app", errs(config.CustomErrors{Codes: []int{404}, Backend: "pages", NoIntercept: true})),
		settingsLoc("/builtin", "app", errs(config.CustomErrors{Codes: []int{404}})),
		settingsLoc("/small", "app", withBody),
		settingsLoc("/denied", "app", denied),
		settingsLoc("/slow", "app", slow),
		settingsLoc("/fallback", "empty", errs(config.CustomErrors{Backend: "pages", Fallback: true})),
		settingsLoc("/plain", "app", config.LocationSettings{}),
		settingsLoc("/global", "app", errs(config.CustomErrors{Codes: []int{500, 503}, Backend: "pages", Global: true})),
	)}, backendAt("app", app), backendAt("pages", pages), backendAt("empty"))
	cfg.Global.CustomHTTPErrors = "500,503"
	h := startNginx(t, cfg, nil)

	t.Run("a listed code of the backend: the error backend answers with the X-* headers", func(t *testing.T) {
		resp, r := send(t, h, "GET", "http://err.test/app/x?status=404", nil, "Accept", "text/html", "X-Request-ID", "")
		want := map[string]string{"X-Code": "404", "X-Format": "text/html", "X-Original-URI": "/app/x?status=404",
			"X-Namespace": "default", "X-Ingress-Name": "test", "X-Service-Name": "app", "X-Service-Port": "80"}
		if resp.StatusCode != 404 || r.Backend != "errors" || r.Path != "/" {
			t.Fatalf("= %d from %q for %q, want 404 from the error backend for /", resp.StatusCode, r.Backend, r.Path)
		}
		for k, v := range want {
			if got := r.Headers.Get(k); got != v {
				t.Errorf("%s = %q, want %q", k, got, v)
			}
		}
		if len(r.Headers.Get("X-Request-ID")) != 32 {
			t.Errorf("X-Request-ID %q", r.Headers.Get("X-Request-ID"))
		}
	})
	t.Run("other codes keep their status", func(t *testing.T) {
		for _, tc := range []struct {
			url  string
			code int
			body string
		}{
			{"http://err.test/app?status=200", 200, "app 200"},
			{"http://err.test/app?status=302", 302, "app 302"},
			{"http://err.test/app?status=500", 500, "app 500"}, // not listed: the backend's answer (errorsets.go)
			{"http://err.test/pass?status=404", 404, "app 404"},
			{"http://err.test/plain?status=404", 404, "app 404"},
			{"http://err.test/global?status=404", 404, "app 404"}, // the ConfigMap's codes only

		} {
			resp, _ := send(t, h, "GET", tc.url, nil)
			if resp.StatusCode != tc.code || tc.body != "" && resp.Header.Get("X-App") != "1" {
				t.Errorf("GET %s = %d (X-App %q), want %d from the backend", tc.url, resp.StatusCode, resp.Header.Get("X-App"), tc.code)
			}
		}
	})
	t.Run("the ConfigMap's codes", func(t *testing.T) {
		if resp, r := send(t, h, "GET", "http://err.test/global?status=503", nil); resp.StatusCode != 503 || r.Headers.Get("X-Code") != "503" {
			t.Fatalf("= %d from %q, X-Code %q", resp.StatusCode, r.Backend, r.Headers.Get("X-Code"))
		}
	})
	t.Run("without an error backend: the built-in default backend's 404", func(t *testing.T) {
		if resp, r := send(t, h, "GET", "http://err.test/builtin?status=404", nil); resp.StatusCode != 404 || r.Backend != "" {
			t.Fatalf("= %d from %q", resp.StatusCode, r.Backend)
		}
	})
	t.Run("413 of the router", func(t *testing.T) {
		resp, r := send(t, h, "POST", "http://err.test/small", strings.NewReader(strings.Repeat("x", 2048)))
		if resp.StatusCode != 413 || r.Backend != "errors" || r.Headers.Get("X-Code") != "413" || r.Method != "POST" {
			t.Fatalf("= %d from %q, X-Code %q, %s", resp.StatusCode, r.Backend, r.Headers.Get("X-Code"), r.Method)
		}
	})
	t.Run("403 of the allow-list", func(t *testing.T) {
		if resp, r := send(t, h, "GET", "http://err.test/denied", nil); resp.StatusCode != 403 || r.Headers.Get("X-Code") != "403" {
			t.Fatalf("= %d from %q, X-Code %q", resp.StatusCode, r.Backend, r.Headers.Get("X-Code"))
		}
	})
	t.Run("504 of nginx", func(t *testing.T) {
		if resp, r := send(t, h, "GET", "http://err.test/slow?hang", nil); resp.StatusCode != 504 || r.Headers.Get("X-Code") != "504" {
			t.Fatalf("= %d from %q, X-Code %q", resp.StatusCode, r.Backend, r.Headers.Get("X-Code"))
		}
	})
	t.Run("default-backend answers while the backend has no endpoints", func(t *testing.T) {
		resp, r := send(t, h, "GET", "http://err.test/fallback/x?y=1", nil)
		if resp.StatusCode != 503 || r.Backend != "errors" || r.Headers.Get("X-Code") != "503" || r.URI() != "/fallback/x?y=1" ||
			r.Headers.Get("X-Service-Name") != "app" {
			t.Fatalf("= %d from %q for %q, X-Code %q", resp.StatusCode, r.Backend, r.URI(), r.Headers.Get("X-Code"))
		}
	})
}

// TestCustomErrorsGRPC: nginx's 502 of a gRPC route without endpoints
// that answer goes to the error backend as well.
func TestCustomErrorsGRPC(t *testing.T) {
	pages := startHTTPTest(t, errorPages(), false, false)
	st := config.LocationSettings{BackendProtocol: "GRPC", Errors: &config.CustomErrors{Codes: []int{502}, Backend: "pages",
		Service: "grpc", ServicePort: "50051"}}
	cfg := configOf("errors-grpc", []config.Server{serverOf("g.test", settingsLoc("/", "grpc", st))},
		backendAt("grpc", deadPort(t)), backendAt("pages", pages))
	h := startNginx(t, cfg, nil)
	resp, r := send(t, h, "POST", "http://g.test/svc.Echo/Call", nil, "Content-Type", "application/grpc")
	if resp.StatusCode != 502 || r.Backend != "errors" || r.Headers.Get("X-Code") != "502" || r.Headers.Get("X-Service-Name") != "grpc" {
		t.Fatalf("= %d from %q, X-Code %q", resp.StatusCode, r.Backend, r.Headers.Get("X-Code"))
	}
}

// TestRefusedProxyAndErrors: router.lua checks the proxy and errors fields
// again; a host with values Build never emits answers 503, the others are
// served.
func TestRefusedProxyAndErrors(t *testing.T) {
	app := startEcho(t, "app")
	bad := func(host string, st config.LocationSettings) config.Server {
		return serverOf(host, settingsLoc("/", "app", st))
	}
	cfg := configOf("proxy-refused", []config.Server{
		bad("good.test", config.LocationSettings{Proxy: &config.ProxySettings{Buffering: "on"}, Errors: &config.CustomErrors{Codes: []int{404}}}),
		bad("version.test", config.LocationSettings{Proxy: &config.ProxySettings{HTTPVersion: "2"}}),
		bad("tries.test", config.LocationSettings{Proxy: &config.ProxySettings{NextUpstreamTries: 101}}),
		bad("redirect.test", config.LocationSettings{Proxy: &config.ProxySettings{RedirectFrom: "/a"}}),
		bad("space.test", config.LocationSettings{Proxy: &config.ProxySettings{CookiePathFrom: "/a b", CookiePathTo: "/"}}),
		bad("code.test", config.LocationSettings{Errors: &config.CustomErrors{Codes: []int{499}}}),
		bad("pipe.test", config.LocationSettings{Errors: &config.CustomErrors{Codes: []int{404}, Backend: "a|b"}}),
		bad("fallback.test", config.LocationSettings{Errors: &config.CustomErrors{Fallback: true}}),
	}, backendOf("app", app))
	h := startNginx(t, cfg, nil)
	h.allowLuaErrors = true
	checkServed(t, h, "http://good.test/", 200, "app")
	for _, host := range []string{"version", "tries", "redirect", "space", "code", "pipe", "fallback"} {
		if r := h.mustGet("http://" + host + ".test/"); r.Status != 503 {
			t.Errorf("%s.test: %d, want 503", host, r.Status)
		}
	}
}
