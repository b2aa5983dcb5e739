package faults

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/test/testkit/world"
)

// garbageNamespace holds the subjects of the garbage: no object of the API
// lives there, so the last good state of every real object stays.
const garbageNamespace = "faults-garbage"

// decodeErrorsMetric counts the stream messages a syncer skipped.
const decodeErrorsMetric = "ingress_sync_syncer_decode_errors_total"

// The sizes of the garbage: one message just under the servers'
// max_payload (1MB), which the stream stores, and one over it, which the
// servers refuse.
const (
	bigGarbage      = 900 << 10
	oversizeGarbage = 2 << 20
)

// badMessages are stored in the stream: bytes that are no encoding, an
// envelope of a schema version from the future, and a big message of
// garbage.
func badMessages() (map[string][]byte, error) {
	junk := make([]byte, 512)
	big := make([]byte, bigGarbage)
	_, _ = rand.Read(junk) // crypto/rand never fails
	_, _ = rand.Read(big)
	future, err := msgpack.Marshal(map[string]any{"schemaVersion": 999, "op": "create", "kind": "Ingress",
		"namespace": garbageNamespace, "name": "wrong-schema", "object": map[string]any{"spec": 42}})
	if err != nil {
		return nil, err
	}
	subject := func(name string) string {
		return events.Subject(world.Prefix, events.KindIngress, garbageNamespace, name)
	}
	return map[string][]byte{subject("garbage"): junk, subject("wrong-schema"): future, subject("big-garbage"): big}, nil
}

// publishGarbage publishes the bad messages straight into the stream's
// subjects, with the headers of an Ingress event, and an oversize one the
// servers must refuse.
func (s *suite) publishGarbage(ctx context.Context) (string, error) {
	before, err := s.decodeErrorCounts(ctx)
	if err != nil {
		return "", err
	}
	s.decodeErrors = before
	msgs, err := badMessages()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for subject, data := range msgs {
		m := nats.NewMsg(subject)
		m.Data = data
		m.Header.Set(events.HeaderOp, string(events.OpCreate))
		m.Header.Set(events.HeaderKind, string(events.KindIngress))
		if _, err := s.js.PublishMsg(ctx, m); err != nil {
			return "", fmt.Errorf("publish %s: %w", subject, err)
		}
	}
	over := make([]byte, oversizeGarbage)
	_, err = s.js.Publish(ctx, events.Subject(world.Prefix, events.KindIngress, garbageNamespace, "oversize"), over)
	if !errors.Is(err, nats.ErrMaxPayload) {
		return "", fmt.Errorf("an oversize message: %v, want %v", err, nats.ErrMaxPayload)
	}
	return fmt.Sprintf("%d bad messages stored, a %d MB one refused by the servers", len(msgs), oversizeGarbage>>20), nil
}

// garbageSkipped: every syncer counted each bad message as a decode error.
func (s *suite) garbageSkipped(ctx context.Context) error {
	now, err := s.decodeErrorCounts(ctx)
	if err != nil {
		return err
	}
	msgs, _ := badMessages()
	for name, n := range now {
		if n < s.decodeErrors[name]+float64(len(msgs)) {
			return fmt.Errorf("%s: %s %g, was %g before %d bad messages", name, decodeErrorsMetric, n, s.decodeErrors[name], len(msgs))
		}
	}
	return nil
}

// decodeErrorCounts reads every syncer's decode errors from its metrics.
func (s *suite) decodeErrorCounts(ctx context.Context) (map[string]float64, error) {
	out := map[string]float64{}
	for _, sy := range s.w.Syncers {
		v, err := scrape(ctx, sy.MetricsURL(), decodeErrorsMetric)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sy.Name, err)
		}
		out[sy.Name] = v
	}
	return out, nil
}

// scrape reads one unlabelled metric from a Prometheus text page.
func scrape(ctx context.Context, url, metric string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), metric+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, fmt.Errorf("no %s at %s", metric, url)
}
