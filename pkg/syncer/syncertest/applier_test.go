package syncertest

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"errors"
	"testing"
)

func TestApplier(t *testing.T) {
	a := New()
	one := &config.Configuration{Checksum: "1", Servers: []config.Server{{Hostname: "a.example.com"}}}
	two := &config.Configuration{Checksum: "2", Servers: []config.Server{{Hostname: "b.example.com"}}}
	boom := errors.New("boom")
	steps := []struct {
		name    string
		cfg     *config.Configuration
		fail    error
		reload  bool
		hosts   int // upserted
		running string
	}{
		{"first is a reload", one, nil, true, 1, "1"},
		{"failure keeps the running one", two, boom, false, 1, "1"},
		{"retry diffs from the running one", two, nil, false, 1, "2"},
	}
	for i, s := range steps {
		a.FailNext(s.fail)
		ch, err := a.Apply(context.Background(), s.cfg)
		if !errors.Is(err, s.fail) || ch.Reload != s.reload || len(ch.ServersUpserted) != s.hosts || a.Running().Checksum != s.running {
			t.Errorf("%s: change %+v, err %v, running %s", s.name, ch, err, a.Running().Checksum)
		}
		if c := a.Calls(); len(c) != i+1 || c[i].Checksum != s.cfg.Checksum || !errors.Is(c[i].Err, s.fail) {
			t.Errorf("%s: calls %+v", s.name, c)
		}
		<-a.Seen()
	}
}
