package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/replay"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
	"github.com/ingress-sync/ingress-sync/test/testkit/natstest"
)

const cmdTestTimeout = 30 * time.Second

// storyEvent is one event a test publishes.
type storyEvent struct {
	op  events.Op
	obj runtime.Object
}

// publishStory starts an embedded nats-server, creates the INGRESS stream
// and publishes a short story: a shop app, an endpoint change, a second
// app, and a change of the global settings (a reload with --configmap
// kube-system/ingress-sync). It returns the server URL.
func publishStory(t *testing.T) string {
	t.Helper()
	web := fixtures.Rule("shop.example.com", fixtures.Prefix("/", "web", 80))
	return publishEvents(t, []storyEvent{
		{events.OpCreate, fixtures.IngressClass("nginx", "k8s.io/ingress-sync", false)},
		{events.OpCreate, fixtures.Service("shop", "web", 80)},
		{events.OpCreate, fixtures.EndpointSlice("shop", "web-abc", "web", 8080, "10.0.0.1", "10.0.0.2")},
		{events.OpCreate, fixtures.Ingress("shop", "web", web)},
		{events.OpUpdate, fixtures.EndpointSlice("shop", "web-abc", "web", 8080, "10.0.0.1")},
		{events.OpCreate, fixtures.Ingress("blog", "site", fixtures.Rule("blog.example.com", fixtures.Prefix("/", "site", 80)))},
		{events.OpCreate, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "ingress-sync"},
			Data: map[string]string{"worker-processes": "2"}}},
	})
}

// publishEvents starts an embedded nats-server, creates the INGRESS stream,
// publishes story and returns the server URL.
func publishEvents(t *testing.T, story []storyEvent) string {
	t.Helper()
	_, url := natstest.Start(t)
	_, js := natstest.Connect(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), cmdTestTimeout)
	defer cancel()
	if _, err := stream.Ensure(ctx, js, stream.Config{Name: "INGRESS", SubjectPrefix: "ingress", History: -1}); err != nil {
		t.Fatal(err)
	}
	for i, s := range story {
		publish(t, ctx, js, s.op, s.obj, i+1)
	}
	return url
}

func publish(t *testing.T, ctx context.Context, js jetstream.JetStream, op events.Op, obj runtime.Object, rv int) {
	t.Helper()
	m := obj.(metav1.Object)
	m.SetResourceVersion(strconv.Itoa(rv))
	ev := events.Event{Op: op, Kind: events.KindOf(obj), Namespace: m.GetNamespace(), Name: m.GetName(),
		UID: string(m.GetUID()), ResourceVersion: m.GetResourceVersion(), Object: obj}
	data, err := events.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	msg := nats.NewMsg(events.Subject("ingress", ev.Kind, ev.Namespace, ev.Name))
	msg.Header, msg.Data = events.Headers(ev), data
	if _, err := js.PublishMsg(ctx, msg); err != nil {
		t.Fatal(err)
	}
}

// runCmd runs a subcommand in process, as main does.
func runCmd(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTestTimeout)
	defer cancel()
	var out, errOut bytes.Buffer
	err = dispatch(ctx, args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestReplayAt(t *testing.T) {
	url := publishStory(t)
	out, stderr, err := runCmd(t, "", "replay", "--nats-url", url, "--at", "5", "--nginx-conf")
	if err != nil {
		t.Fatalf("replay --at: %v\n%s", err, stderr)
	}
	for _, want := range []string{
		"Stream INGRESS at seq 5", "History: complete", "shop.example.com", "/ -> shop-web-80  [shop/web]",
		"shop-web-80  round_robin  1 endpoint: 10.0.0.1:8080", "Default certificate: _fallback",
		"# nginx.conf at seq 5", "pid /var/lib/ingress-sync/nginx.pid;",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "blog.example.com") {
		t.Errorf("the configuration at seq 5 shows an Ingress published at seq 6:\n%s", out)
	}
	if conf := out[strings.Index(out, "# nginx.conf"):]; strings.Contains(conf, "shop.example.com") {
		t.Errorf("nginx.conf names a host; only the route tables may:\n%s", conf)
	}
	if stderr != "" {
		t.Errorf("stderr %q: no progress bar unless stderr is a terminal or --progress", stderr)
	}
	out, _, err = runCmd(t, "", "replay", "--nats-url", url, "--at", "5", "--routes", "--host", "SHOP.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if want := "1 host, 1 route\nHOST  "; !strings.HasPrefix(out, want) || !strings.Contains(out, "shop.example.com  prefix  /     shop-web-80  shop/web  -\n") {
		t.Errorf("replay --routes --host:\n%s", out)
	}
}

func TestReplayAtJSON(t *testing.T) {
	url := publishStory(t)
	out, _, err := runCmd(t, "", "replay", "--nats-url", url, "--at", "6", "--output", "json", "--progress")
	if err != nil {
		t.Fatal(err)
	}
	var snap struct {
		Sequence      uint64 `json:"sequence"`
		Configuration struct {
			Checksum string `json:"checksum"`
			Servers  []struct {
				Hostname string `json:"hostname"`
			} `json:"servers"`
			Certificates []struct {
				Cert []byte `json:"cert"`
				Key  []byte `json:"key"`
			} `json:"certificates"`
		} `json:"configuration"`
	}
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if snap.Sequence != 6 || len(snap.Configuration.Servers) != 3 || snap.Configuration.Checksum == "" {
		t.Errorf("snapshot %+v; want seq 6 with 3 servers and a checksum", snap)
	}
	for _, c := range snap.Configuration.Certificates {
		if c.Cert != nil || c.Key != nil {
			t.Error("JSON output carries certificate key material")
		}
	}
}

func TestReplayTimeline(t *testing.T) {
	url := publishStory(t)
	cm := []string{"--configmap", "kube-system/ingress-sync"}
	out, stderr, err := runCmd(t, "", append([]string{"replay", "--nats-url", url, "--from", "2", "--host", "shop.example.com", "--progress"}, cm...)...)
	if err != nil {
		t.Fatalf("replay --from: %v\n%s", err, stderr)
	}
	for _, want := range []string{
		"Timeline of stream INGRESS from seq 2 to the end",
		"seq 4  create Ingress shop/web  dynamic",
		"routes: hosts upserted shop.example.com",
		"seq 5  update EndpointSlice shop/web-abc  dynamic",
		"endpoints shop-web-80: -10.0.0.2:8080, 1 left",
		"seq 7  create ConfigMap kube-system/ingress-sync  RELOAD",
		"why: global settings changed",
		"6 events from seq 2 to seq 7, 3 shown",
		"Reloads, for global settings (1 shown)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("timeline lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "replay [") || !strings.HasSuffix(stderr, "\n") {
		t.Errorf("--progress drew %q on stderr", stderr)
	}
	out, _, err = runCmd(t, "", append([]string{"replay", "--nats-url", url, "--from", "1", "--to", "7", "--changed", "--output", "json"}, cm...)...)
	if err != nil {
		t.Fatal(err)
	}
	var tl replay.Timeline
	if err := json.Unmarshal([]byte(out), &tl); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	var got []string
	for _, e := range tl.Entries {
		got = append(got, fmt.Sprintf("%d reload=%v routes=%v", e.Sequence, e.Reload, e.Diff.RoutesUpserted))
	}
	want := []string{"4 reload=false routes=[shop.example.com]", "5 reload=false routes=[]", "6 reload=false routes=[blog.example.com]", "7 reload=true routes=[]"}
	if tl.Events != 7 || !slices.Equal(got, want) {
		t.Errorf("JSON timeline: %d events, entries %q; want 7 events, entries %q", tl.Events, got, want)
	}
}

func TestReplayErrors(t *testing.T) {
	url := publishStory(t)
	tests := []struct {
		name string
		args []string
		want string
		is   error
	}{
		{"no point", []string{}, "give --at", errUsage},
		{"at and from", []string{"--at", "3", "--from", "1"}, "one or the other", errUsage},
		{"nginx-conf without at", []string{"--from", "1", "--nginx-conf"}, "--nginx-conf needs --at", errUsage},
		{"filter without timeline", []string{"--at", "3", "--host", "x"}, "filter a timeline", errUsage},
		{"routes without at", []string{"--from", "1", "--routes"}, "--routes needs --at", errUsage},
		{"routes and nginx-conf", []string{"--at", "3", "--routes", "--nginx-conf"}, "drop --nginx-conf", errUsage},
		{"routes of an unknown host", []string{"--at", "6", "--routes", "--host", "nope.example.com"}, `at seq 6: replay: no such host: "nope.example.com"`, replay.ErrNoSuchHost},
		{"bad output", []string{"--at", "3", "--output", "yaml"}, "want text or json", errUsage},
		{"bad point", []string{"--at", "yesterday"}, "--at: replay: invalid point", replay.ErrInvalidPoint},
		{"time before the stream", []string{"--at", "2001-01-01T00:00:00Z"}, "is before the first message", replay.ErrBeforeStream},
		{"sequence beyond the end", []string{"--at", "99"}, "sequence 99 is after the last message", replay.ErrBeyondEnd},
		{"to before from", []string{"--from", "5", "--to", "2"}, "--to seq 2 is before --from seq 5", replay.ErrInvalidPoint},
		{"unknown stream", []string{"--at", "1", "--stream", "NOPE"}, `stream "NOPE"`, jetstream.ErrStreamNotFound},
		{"bad controller class", []string{"--at", "1", "--controller-class", "nope"}, "controller class", replay.ErrInvalidOptions},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"replay", "--nats-url", url}, tc.args...)
			out, _, err := runCmd(t, "", args...)
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want %v saying %q", err, tc.is, tc.want)
			}
			if out != "" {
				t.Errorf("stdout %q on error", out)
			}
		})
	}
}

func TestReplayUnreachableServer(t *testing.T) {
	_, _, err := runCmd(t, "", "replay", "--nats-url", "nats://127.0.0.1:1", "--at", "1", "--timeout", "300ms")
	if err == nil || !strings.Contains(err.Error(), "connecting to NATS at nats://127.0.0.1:1") {
		t.Errorf("error %v; want one naming the URL", err)
	}
}
