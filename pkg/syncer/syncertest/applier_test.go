package syncertest

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"errors"
	"reflect"
	"testing"
)

// TestApplier: the Applier records the Change it is given, reports its
// reload and keeps the last Configuration applied without error.
func TestApplier(t *testing.T) {
	a := New()
	one := &config.Configuration{Checksum: "1", Servers: []config.Server{{Hostname: "a.example.com"}}}
	two := &config.Configuration{Checksum: "2", Servers: []config.Server{{Hostname: "b.example.com"}}}
	boom := errors.New("boom")
	steps := []struct {
		name    string
		cfg     *config.Configuration
		ch      config.Change
		fail    error
		running string
	}{
		{"first is a reload", one, config.Change{Reload: true, ServersUpserted: one.Servers}, nil, "1"},
		{"failure keeps the running one", two, config.Change{ServersUpserted: two.Servers}, boom, "1"},
		{"retry", two, config.Change{ServersUpserted: two.Servers, ServersRemoved: []string{"a.example.com"}}, nil, "2"},
	}
	for i, s := range steps {
		a.FailNext(s.fail)
		reload, err := a.Apply(context.Background(), s.cfg, s.ch)
		if !errors.Is(err, s.fail) || reload != s.ch.Reload || a.Running().Checksum != s.running {
			t.Errorf("%s: reload %v, err %v, running %s", s.name, reload, err, a.Running().Checksum)
		}
		c := a.Calls()
		if len(c) != i+1 || c[i].Checksum != s.cfg.Checksum || !errors.Is(c[i].Err, s.fail) || !reflect.DeepEqual(c[i].Change, s.ch) {
			t.Errorf("%s: calls %+v", s.name, c)
		}
		<-a.Seen()
	}
}
