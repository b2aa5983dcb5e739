package world

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/ingress-sync/ingress-sync/internal/echo"
)

// Client returns an HTTP client that sends every request to this syncer's
// nginx, whatever the URL's host: http:// to its HTTP port, https:// to its
// HTTPS port with SNI and verification against roots (nil: system roots).
// Redirects are not followed.
func (s *Syncer) Client(roots *x509.CertPool) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			port := s.HTTPPort
			if _, p, _ := net.SplitHostPort(addr); p == "443" {
				port = s.HTTPSPort
			}
			return dialer.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		},
		TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		MaxIdleConnsPerHost: 16,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Response is what a request through nginx got: the status, and the echo
// reply when a backend answered.
type Response struct {
	Status int
	Reply  echo.Reply
	Header http.Header
	TLS    *tls.ConnectionState
}

// Get requests url through c and decodes an echo reply when there is one.
func Get(ctx context.Context, c *http.Client, url string) (Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Response{}, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Response{}, err
	}
	r := Response{Status: resp.StatusCode, Header: resp.Header, TLS: resp.TLS}
	if resp.Header.Get("X-Echo-Backend") != "" {
		if err := json.Unmarshal(body, &r.Reply); err != nil {
			return r, fmt.Errorf("echo reply from %s: %w", url, err)
		}
	}
	return r, nil
}
