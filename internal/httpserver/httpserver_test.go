package httpserver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestProbesAndMetrics(t *testing.T) {
	reg := NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "test_things_total", Help: "h"})
	reg.MustRegister(c)
	c.Add(3)
	ready := errors.New("bootstrap not caught up")
	s := &Server{Addr: "127.0.0.1:0", Registry: reg, Readyz: func() error { return ready }}
	addr, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})
	base := "http://" + addr.String()
	cases := []struct {
		name, path string
		code       int
		body       string
	}{
		{"healthy by default", "/healthz", 200, "ok\n"},
		{"not ready says why", "/readyz", 503, "not ok: bootstrap not caught up\n"},
		{"metrics exposes registry", "/metrics", 200, "test_things_total 3"},
	}
	client := &http.Client{Timeout: 5 * time.Second}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := client.Get(base + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.code {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.code)
			}
			if tc.path == "/metrics" {
				if !strings.Contains(string(b), tc.body) {
					t.Fatalf("metrics lack %q", tc.body)
				}
				return
			}
			if string(b) != tc.body {
				t.Fatalf("body %q, want %q", b, tc.body)
			}
		})
	}
}
