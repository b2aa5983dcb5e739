// Package echo is the HTTP backend of tests, benchmarks and the demo: it
// answers every request with JSON saying which backend answered and what it
// received, so that routing through nginx can be checked from the client.
package echo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Reply is what a backend answers.
type Reply struct {
	Backend string              `json:"backend"`
	Method  string              `json:"method"`
	Host    string              `json:"host"`
	Path    string              `json:"path"`
	Query   string              `json:"query,omitempty"`
	Headers map[string][]string `json:"headers"`
}

// Server is one echo backend.
type Server struct {
	Name     string
	Addr     string // the bound address, after Start
	requests atomic.Int64
	srv      *http.Server
	done     chan error
}

// Start listens on addr ("198.18.0.1:8080", "127.0.0.1:0") and serves in the
// background until Close.
func Start(name, addr string) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("echo %s: %w", name, err)
	}
	s := &Server{Name: name, Addr: l.Addr().String(), done: make(chan error, 1)}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 30 * time.Second}
	go func() { s.done <- s.srv.Serve(l) }()
	return s, nil
}

// ServeHTTP answers with a Reply.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Echo-Backend", s.Name)
	_ = json.NewEncoder(w).Encode(Reply{
		Backend: s.Name, Method: r.Method, Host: r.Host, Path: r.URL.Path, Query: r.URL.RawQuery, Headers: r.Header,
	})
}

// Requests is how many requests this backend answered.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Close stops the server within 5 seconds.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		return err
	}
	if err := <-s.done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
