// Package echo is the HTTP backend of tests, benchmarks and the demo: it
// answers every request with JSON saying which backend answered and what it
// received, so that routing through nginx can be checked from the client.
// StartUDP is its UDP counterpart, answering datagrams.
package echo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// Reply is what a backend answers.
type Reply struct {
	Backend string      `json:"backend"`
	Method  string      `json:"method"`
	Host    string      `json:"host"`
	Path    string      `json:"path"`
	Query   string      `json:"query,omitempty"`
	Headers http.Header `json:"headers"`
	// Proto is the request's protocol ("HTTP/1.1"); Chunked says that its
	// body came with chunked transfer coding.
	Proto   string `json:"proto,omitempty"`
	Chunked bool   `json:"chunked,omitempty"`
}

// Server is one echo backend.
type Server struct {
	Name     string
	Addr     string // the bound address, after Start
	requests atomic.Int64
	delay    atomic.Int64 // nanoseconds each answer waits
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
	if d := time.Duration(s.delay.Load()); d > 0 {
		time.Sleep(d)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Echo-Backend", s.Name)
	w.Header().Set("Server", "echo") // nginx replaces it unless allow-backend-server-header
	_ = json.NewEncoder(w).Encode(Reply{
		Backend: s.Name, Method: r.Method, Host: r.Host, Path: r.URL.Path, Query: r.URL.RawQuery, Headers: r.Header,
		Proto: r.Proto, Chunked: len(r.TransferEncoding) > 0 && r.TransferEncoding[0] == "chunked",
	})
}

// SetDelay makes every later answer wait d (a slow backend).
func (s *Server) SetDelay(d time.Duration) { s.delay.Store(int64(d)) }

// Port is the bound port.
func (s *Server) Port() int {
	_, p, _ := net.SplitHostPort(s.Addr)
	n, _ := strconv.Atoi(p)
	return n
}

// Requests is how many requests this backend answered.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Close stops the server: gracefully within a second, then by closing the
// connections still open (a slow or stuck request).
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
	if err := <-s.done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// URI is the path with the query, as the backend received it.
func (r Reply) URI() string {
	if r.Query == "" {
		return r.Path
	}
	return r.Path + "?" + r.Query
}
