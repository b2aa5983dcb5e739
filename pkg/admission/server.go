package admission

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/ingress-sync/ingress-sync/internal/httpserver"
)

// Path is where the webhook answers, as ingress-nginx's.
const Path = "/networking/v1/ingresses"

// RoutePath is the path of the webhook of HTTPRoutes: the same Handler,
// which reviews either kind, behind a webhook of their own (its rules and
// match conditions differ).
const RoutePath = "/gateway.networking.k8s.io/v1/httproutes"

// Errors of the Server.
var (
	ErrInvalidServer = errors.New("invalid admission server")
	ErrCertificate   = errors.New("admission serving certificate")
)

// Timeouts of the Server: the API server waits for a webhook 10 s by
// default and 30 s at most.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 15 * time.Second
	idleTimeout       = 60 * time.Second
	shutdownTimeout   = 5 * time.Second
	maxHeaderBytes    = 64 << 10
)

// Server serves a Handler at Path over TLS (and /healthz), with the
// certificate and key of CertFile and KeyFile, read again when either
// file changes (a rotated Secret).
type Server struct {
	Addr              string
	CertFile, KeyFile string
	Handler           http.Handler
	Logger            *slog.Logger

	listener net.Listener
	certs    *certFiles
}

// Listen checks the server, loads its certificate and binds Addr, so that
// callers learn the port before Start.
func (s *Server) Listen() (net.Addr, error) {
	if s.listener != nil {
		return s.listener.Addr(), nil
	}
	if s.Addr == "" || s.CertFile == "" || s.KeyFile == "" || s.Handler == nil {
		return nil, fmt.Errorf("%w: address, certificate file, key file and handler are required", ErrInvalidServer)
	}
	s.certs = &certFiles{cert: s.CertFile, key: s.KeyFile}
	if _, err := s.certs.get(nil); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return nil, fmt.Errorf("admission: listen %s: %w", s.Addr, err)
	}
	s.listener = l
	return l.Addr(), nil
}

// Start serves until ctx is done, then shuts down.
func (s *Server) Start(ctx context.Context) error {
	if _, err := s.Listen(); err != nil {
		return err
	}
	log := s.Logger
	if log == nil {
		log = slog.Default()
	}
	mux := http.NewServeMux()
	mux.Handle(Path, s.Handler)
	mux.Handle(RoutePath, s.Handler)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	srv := &http.Server{
		Handler:           mux,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: s.certs.get},
		ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout, WriteTimeout: writeTimeout,
		IdleTimeout: idleTimeout, MaxHeaderBytes: maxHeaderBytes,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("serving admission webhook", "addr", s.listener.Addr().String(), "path", Path)
	if err := httpserver.Run(ctx, srv, func() error { return srv.ServeTLS(s.listener, "", "") }, shutdownTimeout); err != nil {
		return fmt.Errorf("admission: %w", err)
	}
	log.Info("admission webhook stopped")
	return nil
}

// certFiles is a key pair read from files, read again when a file's
// modification time or size changes.
type certFiles struct {
	cert, key string

	mu    sync.Mutex
	stamp [2]fileStamp
	pair  *tls.Certificate
}

type fileStamp struct {
	mod  time.Time
	size int64
}

func stampOf(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, fmt.Errorf("%w: %w", ErrCertificate, err)
	}
	return fileStamp{mod: fi.ModTime(), size: fi.Size()}, nil
}

// get is tls.Config.GetCertificate: the pair, read again when the files
// changed; the last good pair while a rotation is half written.
func (c *certFiles) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	cs, err := stampOf(c.cert)
	if err != nil {
		return c.last(err)
	}
	ks, err := stampOf(c.key)
	if err != nil {
		return c.last(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pair != nil && c.stamp == [2]fileStamp{cs, ks} {
		return c.pair, nil
	}
	pair, err := tls.LoadX509KeyPair(c.cert, c.key)
	if err != nil {
		if c.pair != nil {
			return c.pair, nil
		}
		return nil, fmt.Errorf("%w: %w", ErrCertificate, err)
	}
	c.pair, c.stamp = &pair, [2]fileStamp{cs, ks}
	return c.pair, nil
}

// last is the last good pair, or err when there is none.
func (c *certFiles) last(err error) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pair != nil {
		return c.pair, nil
	}
	return nil, err
}
