package world

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"strconv"
	"time"
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
			return dialer.DialContext(ctx, network, net.JoinHostPort(s.Address, strconv.Itoa(port)))
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
