// Package httpserver serves a component's /metrics, /healthz and /readyz.
// The watcher and the syncer both use it, so their probes behave alike.
package httpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Check returns nil when healthy (or ready), else the reason.
type Check func() error

// Server serves the probes and metrics of one component.
type Server struct {
	// Addr is the listen address, e.g. ":10254" or "127.0.0.1:0".
	Addr     string
	Registry *prometheus.Registry
	Healthz  Check // nil: always healthy
	Readyz   Check // nil: always ready
	Logger   *slog.Logger

	listener net.Listener
}

// NewRegistry returns a registry with the Go runtime and process collectors.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Listen binds Addr, so that callers learn the port before Start.
func (s *Server) Listen() (net.Addr, error) {
	if s.listener != nil {
		return s.listener.Addr(), nil
	}
	l, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return nil, fmt.Errorf("httpserver: listen %s: %w", s.Addr, err)
	}
	s.listener = l
	return l.Addr(), nil
}

// Start serves until ctx is done, then shuts down within 5 seconds.
func (s *Server) Start(ctx context.Context) error {
	if _, err := s.Listen(); err != nil {
		return err
	}
	log := s.Logger
	if log == nil {
		log = slog.Default()
	}
	srv := &http.Server{
		Handler:           s.handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
	}
	log.Info("serving metrics and probes", "addr", s.listener.Addr().String())
	if err := Run(ctx, srv, func() error { return srv.Serve(s.listener) }, 5*time.Second); err != nil {
		return fmt.Errorf("httpserver: %w", err)
	}
	return nil
}

// Run serves srv with serve (srv.Serve or srv.ServeTLS on its listener)
// until ctx is done, then shuts srv down within timeout. An error of
// serve ends it at once.
func Run(ctx context.Context, srv *http.Server, serve func() error, timeout time.Duration) error {
	errc := make(chan error, 1)
	go func() { errc <- serve() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	reg := s.Registry
	if reg == nil {
		reg = NewRegistry()
	}
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.Handle("GET /healthz", probe(s.Healthz))
	mux.Handle("GET /readyz", probe(s.Readyz))
	return mux
}

func probe(c Check) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if c != nil {
			if err := c(); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprintf(w, "not ok: %v\n", err)
				return
			}
		}
		fmt.Fprintln(w, "ok")
	})
}
