package echo

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Response is what a request got: the status, and the Reply when an echo
// backend answered (zero otherwise, e.g. nginx's own 404).
type Response struct {
	Status int
	Reply  Reply
	Header http.Header
	TLS    *tls.ConnectionState
}

// Get requests url through c with the given header pairs ("Host" sets the
// request's host) and decodes an echo reply when there is one.
func Get(ctx context.Context, c *http.Client, url string, header ...string) (Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Response{}, err
	}
	for i := 0; i+1 < len(header); i += 2 {
		if strings.EqualFold(header[i], "Host") {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
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
