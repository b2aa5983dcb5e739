package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// MaxVersion is the largest version the Lua side stores exactly (its JSON
// encoder keeps 14 significant digits).
const MaxVersion = 99_999_999_999_999

// The JSON wire format of the Lua configuration endpoints. Field names are
// lowerCamel like the model's json tags; items are the model types.

// BackendsDelta is the body of POST /configuration/backends.
type BackendsDelta struct {
	Version  uint64           `json:"version"`
	Upserted []config.Backend `json:"upserted,omitempty"`
	Removed  []string         `json:"removed,omitempty"`
}

// CertificatesDelta is the body of POST /configuration/certs. Cert and Key
// travel as base64 PEM (the encoding of []byte). DefaultCertificate, when
// set, names the certificate served for unknown SNI names.
type CertificatesDelta struct {
	Version            uint64               `json:"version"`
	Upserted           []config.Certificate `json:"upserted,omitempty"`
	Removed            []string             `json:"removed,omitempty"`
	DefaultCertificate string               `json:"defaultCertificate,omitempty"`
}

// RoutesDelta is the body of POST /configuration/routes. Checksum, when
// set, is the Configuration the routes belong to (GET
// /configuration/version reports it).
type RoutesDelta struct {
	Version  uint64   `json:"version"`
	Upserted []Host   `json:"upserted,omitempty"`
	Removed  []string `json:"removed,omitempty"`
	Checksum string   `json:"checksum,omitempty"`
}

// Routes is GET /configuration/routes: the route table router.lua holds.
type Routes struct {
	Version    uint64 `json:"version"`
	Generation uint64 `json:"generation"`
	Checksum   string `json:"checksum"`
	Hosts      []Host `json:"hosts"`
}

// DeltaResult is the answer to an accepted delta.
type DeltaResult struct {
	Version    uint64 `json:"version"`
	Generation uint64 `json:"generation"`
}

// Version is GET /configuration/version, answered by one worker: the
// checksum of the nginx.conf that worker loaded, the checksum of the
// Configuration whose routes were pushed last, and the dynamic state.
type Version struct {
	Checksum               string `json:"checksum"`
	Configuration          string `json:"configuration"`
	RoutesVersion          uint64 `json:"routesVersion"`
	RoutesGeneration       uint64 `json:"routesGeneration"`
	BackendsVersion        uint64 `json:"backendsVersion"`
	BackendsGeneration     uint64 `json:"backendsGeneration"`
	CertificatesVersion    uint64 `json:"certificatesVersion"`
	CertificatesGeneration uint64 `json:"certificatesGeneration"`
	PID                    int    `json:"pid"`
}

// Backends is GET /configuration/backends: what the Lua balancer holds.
type Backends struct {
	Version    uint64           `json:"version"`
	Generation uint64           `json:"generation"`
	Backends   []config.Backend `json:"backends"`
}

// CertificateInfo describes a stored certificate (never its key).
type CertificateInfo struct {
	Name     string   `json:"name"`
	Hosts    []string `json:"hosts,omitempty"`
	Checksum string   `json:"checksum,omitempty"`
	// Cert is the PEM chain, from GetCertificateChains only.
	Cert string `json:"cert,omitempty"`
}

// Certificates is GET /configuration/certs.
type Certificates struct {
	Version            uint64            `json:"version"`
	Generation         uint64            `json:"generation"`
	DefaultCertificate string            `json:"defaultCertificate"`
	Certificates       []CertificateInfo `json:"certificates"`
}

type errorBody struct {
	Error   string `json:"error"`
	Version uint64 `json:"version"`
}

// Client talks to the Lua endpoints on 127.0.0.1:port.
type Client struct {
	base string
	http *http.Client
}

// NewClient returns a client for the status server on 127.0.0.1:port whose
// every call is bounded by timeout.
func NewClient(port int, timeout time.Duration) *Client {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: timeout}).DialContext,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     5 * time.Second,
	}
	return &Client{
		base: "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		http: &http.Client{Transport: tr, Timeout: timeout},
	}
}

// PostBackends sends changed (upserted) and removed backends.
func (c *Client) PostBackends(ctx context.Context, upserted []config.Backend, removed []string, version uint64) (DeltaResult, error) {
	return c.post(ctx, "/configuration/backends", BackendsDelta{Version: version, Upserted: upserted, Removed: removed}, version)
}

// PostCertificates sends changed and removed certificates and, when
// defaultCertificate is not "", the name of the default certificate.
func (c *Client) PostCertificates(ctx context.Context, upserted []config.Certificate, removed []string, defaultCertificate string, version uint64) (DeltaResult, error) {
	return c.post(ctx, "/configuration/certs", CertificatesDelta{
		Version: version, Upserted: upserted, Removed: removed, DefaultCertificate: defaultCertificate,
	}, version)
}

// PostRoutes sends changed (upserted) and removed hosts of the route table
// and, when checksum is not "", the Configuration they belong to.
func (c *Client) PostRoutes(ctx context.Context, upserted []Host, removed []string, checksum string, version uint64) (DeltaResult, error) {
	return c.post(ctx, "/configuration/routes", RoutesDelta{Version: version, Upserted: upserted, Removed: removed, Checksum: checksum}, version)
}

// GetRoutes returns the route table the Lua side holds, sorted by host.
func (c *Client) GetRoutes(ctx context.Context) (Routes, error) {
	var out Routes
	err := c.get(ctx, "/configuration/routes", false, &out)
	return out, err
}

// GetHost returns the routes of one host; the error wraps ErrNotFound when
// the table has no such host.
func (c *Client) GetHost(ctx context.Context, name string) (Host, error) {
	var out Host
	err := c.get(ctx, "/configuration/routes?host="+url.QueryEscape(name), false, &out)
	return out, err
}

// GetBackends returns the backends the Lua side holds, sorted by name.
func (c *Client) GetBackends(ctx context.Context) (Backends, error) {
	var out Backends
	err := c.get(ctx, "/configuration/backends", false, &out)
	return out, err
}

// GetCertificates returns the names, hosts and checksums of the stored
// certificates.
func (c *Client) GetCertificates(ctx context.Context) (Certificates, error) {
	var out Certificates
	err := c.get(ctx, "/configuration/certs", false, &out)
	return out, err
}

// GetVersion asks one worker for the checksum it loaded. It uses a fresh
// connection, so that after a reload the answer comes from a worker that is
// accepting connections now.
func (c *Client) GetVersion(ctx context.Context) (Version, error) {
	var out Version
	err := c.get(ctx, "/configuration/version", true, &out)
	return out, err
}

// Healthz returns nil when the status server answers /healthz.
func (c *Client) Healthz(ctx context.Context) error {
	return c.get(ctx, "/healthz", true, nil)
}

func (c *Client) post(ctx context.Context, path string, body any, version uint64) (DeltaResult, error) {
	var res DeltaResult
	if version > MaxVersion {
		return res, fmt.Errorf("%w: version %d exceeds %d", ErrLuaEndpoint, version, uint64(MaxVersion))
	}
	data, err := json.Marshal(body)
	if err != nil {
		return res, fmt.Errorf("encode %s: %w", path, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(data))
	if err != nil {
		return res, err
	}
	req.Header.Set("Content-Type", "application/json")
	err = c.do(req, &res)
	return res, err
}

func (c *Client) get(ctx context.Context, path string, fresh bool, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return err
	}
	req.Close = fresh
	return c.do(req, out)
}

func (c *Client) do(req *http.Request, out any) error {
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return fmt.Errorf("%s %s: read body: %w", req.Method, req.URL.Path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return statusError(req, resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decode: %w", req.Method, req.URL.Path, err)
	}
	return nil
}

// StaleVersionError carries the version the Lua side holds.
type StaleVersionError struct {
	Current uint64
	Message string
}

func (e *StaleVersionError) Error() string {
	return fmt.Sprintf("%s (stored version %d)", e.Message, e.Current)
}

func (e *StaleVersionError) Unwrap() error { return ErrStaleVersion }

func statusError(req *http.Request, status int, data []byte) error {
	var eb errorBody
	_ = json.Unmarshal(data, &eb)
	if eb.Error == "" {
		eb.Error = string(bytes.TrimSpace(data))
		if len(eb.Error) > 512 {
			eb.Error = eb.Error[:512]
		}
	}
	if status == http.StatusConflict {
		return fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, &StaleVersionError{Current: eb.Version, Message: eb.Error})
	}
	if status == http.StatusBadRequest {
		return fmt.Errorf("%s %s: %w: %w: %s", req.Method, req.URL.Path, ErrLuaEndpoint, ErrRejected, eb.Error)
	}
	if status == http.StatusNotFound && req.Method == http.MethodGet {
		return fmt.Errorf("%s %s: %w: %s", req.Method, req.URL.Path, ErrNotFound, eb.Error)
	}
	return fmt.Errorf("%s %s: %w: status %d: %s", req.Method, req.URL.Path, ErrLuaEndpoint, status, eb.Error)
}

// isStale reports whether err is a stale version answer and the version
// the Lua side holds.
func isStale(err error) (uint64, bool) {
	var sv *StaleVersionError
	if errors.As(err, &sv) {
		return sv.Current, true
	}
	return 0, false
}
