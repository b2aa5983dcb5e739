package testenv

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/proc"
)

// pollInterval is the pause between readiness probes.
const pollInterval = 100 * time.Millisecond

// logTailBytes is how much of a process log goes into an error.
const logTailBytes = 4096

// tokenTransport adds a bearer token to every request.
type tokenTransport struct {
	token string
	next  http.RoundTripper
}

func (t tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.next.RoundTrip(r)
}

// httpClient is the readiness probe client. The apiserver writes its serving
// certificate only as it starts, so the probe (to a loopback port we chose)
// does not verify it; the returned rest.Config does.
func httpClient(token string) *http.Client {
	var rt http.RoundTripper = &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback readiness probe only
		DisableKeepAlives: true,
	}
	if token != "" {
		rt = tokenTransport{token: token, next: rt}
	}
	return &http.Client{Transport: rt, Timeout: 5 * time.Second}
}

// waitReady polls url until it answers 200, the process exits or ctx ends.
func waitReady(ctx context.Context, p *proc.Process, url string, client *http.Client) error {
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	last := "no answer yet"
	for {
		if status, err := probe(ctx, client, url); err == nil && status == "" {
			return nil
		} else if err != nil {
			last = err.Error()
		} else {
			last = status
		}
		select {
		case <-p.Done():
			tail := p.LogTail(logTailBytes)
			if portTaken(tail) {
				return fmt.Errorf("%s exited: %w", p.Name, errPortTaken)
			}
			_, exitErr := p.Exited()
			return fmt.Errorf("%s exited (%v); log %s:\n%s", p.Name, exitErr, p.LogPath, tail)
		case <-ctx.Done():
			return fmt.Errorf("%s not ready at %s: %w (last: %s); log %s:\n%s",
				p.Name, url, ctx.Err(), last, p.LogPath, p.LogTail(logTailBytes))
		case <-ticker.C:
		}
	}
}

// probe returns "" when url answers 200, else a description of the answer.
func probe(ctx context.Context, client *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
	if resp.StatusCode == http.StatusOK {
		return "", nil
	}
	return fmt.Sprintf("HTTP %d: %s", resp.StatusCode, body), nil
}
