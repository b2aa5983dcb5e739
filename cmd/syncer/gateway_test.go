package main

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/events/eventstest"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// TestDecodeGatewayKinds: `syncer decode` shows every Gateway API kind.
func TestDecodeGatewayKinds(t *testing.T) {
	for _, obj := range []runtime.Object{eventstest.GatewayClass(), eventstest.Gateway(), eventstest.HTTPRoute(), eventstest.ReferenceGrant()} {
		ev := eventstest.Of(events.OpCreate, obj)
		t.Run(string(ev.Kind), func(t *testing.T) {
			out, stderr, err := runCmd(t, encode(t, ev), "decode")
			if err != nil || stderr != "" {
				t.Fatalf("decode: %v, stderr %q", err, stderr)
			}
			var got struct {
				Kind, Namespace, Name string
				Object                map[string]any `json:"object"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, out)
			}
			if got.Kind != string(ev.Kind) || got.Namespace != ev.Namespace || got.Name != ev.Name || got.Object["spec"] == nil {
				t.Errorf("decoded %s %s/%s with spec %v:\n%s", got.Kind, got.Namespace, got.Name, got.Object["spec"], out)
			}
		})
	}
	out, _, err := runCmd(t, encode(t, eventstest.Of(events.OpCreate, eventstest.HTTPRoute())), "decode")
	if err != nil || !strings.Contains(out, `"replacePrefixMatch": "/"`) || !strings.Contains(out, `"weight": 0`) {
		t.Errorf("decoded HTTPRoute lacks its filters or its weight 0 (%v):\n%s", err, out)
	}
}

// TestReplayShowsGatewayKinds: `syncer replay` lists the Gateway API
// events among the others, as changing nothing (nothing builds from them
// yet), and --at rebuilds past them.
func TestReplayShowsGatewayKinds(t *testing.T) {
	url := publishEvents(t, []storyEvent{
		{events.OpCreate, fixtures.Service("shop", "web", 80)},
		{events.OpCreate, eventstest.GatewayClass()},
		{events.OpCreate, eventstest.Gateway()},
		{events.OpCreate, eventstest.HTTPRoute()},
		{events.OpCreate, eventstest.ReferenceGrant()},
		{events.OpDelete, eventstest.HTTPRoute()},
		{events.OpCreate, fixtures.Ingress("shop", "web", fixtures.Rule("shop.example.com", fixtures.Prefix("/", "web", 80)))},
	})
	out, stderr, err := runCmd(t, "", "replay", "--nats-url", url, "--from", "1")
	if err != nil {
		t.Fatalf("replay --from: %v\n%s", err, stderr)
	}
	for _, want := range []string{
		"seq 2  create GatewayClass ingress-sync",
		"seq 3  create Gateway shop/edge",
		"seq 4  create HTTPRoute shop/web",
		"seq 5  create ReferenceGrant canary/from-shop",
		"seq 6  delete HTTPRoute shop/web",
		"seq 7  create Ingress shop/web  dynamic",
		"7 events from seq 1 to seq 7",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("timeline lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "error") {
		t.Errorf("timeline reports an error:\n%s", out)
	}
	if _, stderr, err := runCmd(t, "", "replay", "--nats-url", url, "--at", "5"); err != nil {
		t.Errorf("replay --at 5: %v\n%s", err, stderr)
	}
}
