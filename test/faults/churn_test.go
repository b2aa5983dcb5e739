package faults

import (
	"context"
	"sync"
	"time"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/test/testkit/churn"
)

// churner writes the churn through the API for as long as its context
// lives. Writes the API refuses (it is down, or an object the refused
// create would have made is missing) are counted and the churn goes on.
type churner struct {
	target *churn.KubeTarget
	gen    *churn.Generator

	mu      sync.Mutex
	counts  ChurnCounts
	deleted map[string]bool // hosts of Ingresses deleted (and not created again)
	done    chan struct{}
}

func newChurner(target *churn.KubeTarget, gen *churn.Generator) *churner {
	return &churner{target: target, gen: gen, deleted: map[string]bool{}, done: make(chan struct{})}
}

// run writes every change when due until ctx ends or the churn's bound.
func (c *churner) run(ctx context.Context) {
	defer close(c.done)
	began := time.Now()
	for {
		ch, ok := c.gen.Next()
		if !ok {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(began.Add(ch.At))):
		}
		_, err := c.target.Write(ctx, ch)
		c.note(ch, err)
	}
}

func (c *churner) note(ch churn.Change, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch.Class == churn.ClassIngress {
		c.counts.Ingresses++
	} else {
		c.counts.Endpoints++
	}
	if err != nil {
		c.counts.Failed++
		return
	}
	ing, ok := ch.Object.(*networkingv1.Ingress)
	if !ok || len(ing.Spec.Rules) == 0 {
		return
	}
	host := ing.Spec.Rules[0].Host
	switch ch.Op {
	case events.OpDelete:
		c.deleted[host] = true
	case events.OpCreate:
		delete(c.deleted, host)
	}
}

// wait waits for run to return.
func (c *churner) wait() { <-c.done }

func (c *churner) result() (ChurnCounts, map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	deleted := make(map[string]bool, len(c.deleted))
	for h := range c.deleted {
		deleted[h] = true
	}
	return c.counts, deleted
}
