package main

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/nginx"
	"github.com/ingress-sync/ingress-sync/test/testkit/freeport"
)

// luaEndpoint answers GETs on 127.0.0.1 as the Lua configuration endpoint
// does: answers maps a request URI ("/configuration/backends",
// "/configuration/routes?host=a") to its JSON body; any other is a 404.
// Real nginx is exercised in TestRoutesLiveEqualsReplay, pkg/nginx and
// test/e2e. It returns the port.
func luaEndpoint(t *testing.T, answers map[string]any) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := answers[r.URL.RequestURI()]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			body = map[string]string{"error": "no such item"}
		}
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return port
}

// closedPort is a port on 127.0.0.1 nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ports, err := freeport.Ports(1)
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(ports[0])
}

func TestBackends(t *testing.T) {
	held := nginx.Backends{Version: 3, Generation: 2, Backends: []config.Backend{
		{Name: "shop-api-80", LoadBalance: "ewma", Endpoints: []config.Endpoint{}},
		{Name: "shop-web-80", LoadBalance: "round_robin", Endpoints: []config.Endpoint{{Address: "10.0.0.1", Port: 8080}, {Address: "10.0.0.2", Port: 8080}}},
	}}
	port := luaEndpoint(t, map[string]any{"/configuration/backends": held})
	out, _, err := runCmd(t, "", "backends", "--status-port", port)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2 backends (version 3, generation 2)", "BACKEND", "shop-api-80  0 ", "ewma",
		"shop-web-80  2          round_robin   10.0.0.1:8080, 10.0.0.2:8080"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	out, _, err = runCmd(t, "", "backends", "--status-port", port, "--output", "json")
	if err != nil {
		t.Fatal(err)
	}
	var got nginx.Backends
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.Version != 3 || len(got.Backends) != 2 || len(got.Backends[1].Endpoints) != 2 {
		t.Errorf("JSON %+v, %v:\n%s", got, err, out)
	}
}

func TestBackendsErrors(t *testing.T) {
	if _, _, err := runCmd(t, "", "backends", "--status-port", closedPort(t), "--timeout", "1s"); err == nil || !strings.Contains(err.Error(), "is nginx running") {
		t.Errorf("nothing listening: %v; want a hint", err)
	}
	for _, args := range [][]string{{"--output", "yaml"}, {"--status-port", "0"}, {"extra"}} {
		if _, _, err := runCmd(t, "", append([]string{"backends"}, args...)...); !errors.Is(err, errUsage) {
			t.Errorf("backends %v = %v; want a usage error", args, err)
		}
	}
}
