package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/world"
)

// Probing: one request every probePause through each nginx, the base
// hosts in turn, each bounded by probeTimeout; at most probeMax requests
// per nginx in a run.
const (
	probePause   = 50 * time.Millisecond
	probeTimeout = 2 * time.Second
	probeMax     = 10_000_000
)

// prober sends requests through every nginx for as long as the suite runs
// and records every failure with the fault under way.
type prober struct {
	hosts []string
	began time.Time

	mu       sync.Mutex
	fault    string
	sent     map[string]int
	failed   map[string]int
	failures []ProbeFailure
	wg       sync.WaitGroup
}

func newProber(hosts []string) *prober {
	return &prober{hosts: hosts, began: time.Now(), sent: map[string]int{}, failed: map[string]int{}}
}

// start probes through the nginx of every syncer until ctx ends.
func (p *prober) start(ctx context.Context, syncers []*world.Syncer) {
	for _, s := range syncers {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.loop(ctx, s)
		}()
	}
}

func (p *prober) loop(ctx context.Context, s *world.Syncer) {
	client := s.Client(nil)
	client.Timeout = probeTimeout
	for i := range probeMax {
		host := p.hosts[i%len(p.hosts)]
		err := probe(ctx, client, host)
		if ctx.Err() != nil {
			return
		}
		p.note(s.Name, host, err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(probePause):
		}
	}
}

// probe asks host for / and wants 200 from a backend.
func probe(ctx context.Context, client *http.Client, host string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

func (p *prober) note(nginx, host string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent[nginx]++
	if err == nil {
		return
	}
	p.failed[nginx]++
	p.failures = append(p.failures, ProbeFailure{At: time.Since(p.began), Fault: p.fault, Nginx: nginx, Host: host, Error: shortError(err)})
}

// shortError drops the request's URL from a client error: the host is
// recorded apart, and the table stays narrow.
func shortError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// setFault names the fault under way ("" between faults).
func (p *prober) setFault(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fault = name
}

// failedSoFar is the count of failed probes through each nginx.
func (p *prober) failedSoFar() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.failed))
	for k, v := range p.failed {
		out[k] = v
	}
	return out
}

// since is the failed probes per nginx since before (a failedSoFar).
func (p *prober) since(before map[string]int) map[string]int {
	out := p.failedSoFar()
	for k := range out {
		out[k] -= before[k]
	}
	return out
}

// wait waits for every probe loop to end (after their context).
func (p *prober) wait() { p.wg.Wait() }

func (p *prober) result() (map[string]int, []ProbeFailure) {
	p.mu.Lock()
	defer p.mu.Unlock()
	sent := make(map[string]int, len(p.sent))
	for k, v := range p.sent {
		sent[k] = v
	}
	return sent, append([]ProbeFailure(nil), p.failures...)
}
