package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/inspect"
	"github.com/ingress-sync/ingress-sync/test/testkit/natstest"
)

// TestInspectLive runs `syncer run` with a real nginx and a real
// nats-server on the routes story, then `syncer conf`, `certs`, `general`
// and `fleet` against them, as tables and as JSON.
func TestInspectLive(t *testing.T) {
	story := routesStory(t)
	url := publishEvents(t, story)
	common := []string{"--nats-url", url, "--configmap", "kube-system/ingress-sync"}
	s := runSyncer(t, common)
	replayed, _, err := runCmd(t, "", append([]string{"replay", "--at", strconv.Itoa(len(story)), "--routes"}, common...)...)
	if err != nil {
		t.Fatal(err)
	}
	waitForRoutes(t, s.status, replayed[:strings.Index(replayed, "\n")])
	lua := []string{"--status-port", s.status}
	run := func(args ...string) string {
		t.Helper()
		out, stderr, err := runCmd(t, "", args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr)
		}
		return out
	}
	t.Run("conf", func(t *testing.T) {
		checkConf(t, run(append([]string{"conf", "--nginx-dir", s.dir}, lua...)...), s.dir)
	})
	t.Run("replayed nginx.conf", func(t *testing.T) {
		// Given the syncer's flags, replay renders the very file it runs.
		args := append([]string{"replay", "--at", strconv.Itoa(len(story)), "--nginx-conf", "--output", "json"}, common...)
		var snap struct {
			NginxConf string `json:"nginxConf"`
		}
		if err := json.Unmarshal([]byte(run(append(args, s.confFlags...)...)), &snap); err != nil {
			t.Fatal(err)
		}
		file, err := os.ReadFile(s.dir + "/nginx.conf")
		if err != nil {
			t.Fatal(err)
		}
		if snap.NginxConf != string(file) {
			t.Errorf("replay --nginx-conf with the syncer's flags differs from its nginx.conf:\n%s\nthe file:\n%s", snap.NginxConf, file)
		}
	})
	var conf runningConf
	if err := json.Unmarshal([]byte(run(append([]string{"conf", "--json", "--nginx-dir", s.dir}, lua...)...)), &conf); err != nil || !conf.Running || conf.Checksum == "" {
		t.Errorf("conf --json: %+v, %v", conf, err)
	}
	t.Run("certs", func(t *testing.T) {
		checkCerts(t, run(append([]string{"certs"}, lua...)...), run(append([]string{"certs", "--json"}, lua...)...))
	})
	t.Run("general", func(t *testing.T) {
		out := run(append([]string{"general"}, lua...)...)
		for _, want := range []string{"SETTING", "nginx.conf checksum     " + conf.Checksum, "worker pid              " + strconv.Itoa(conf.PID), "https port              " + s.https} {
			if !strings.Contains(out, want) {
				t.Errorf("general lacks %q:\n%s", want, out)
			}
		}
		var g map[string]any
		if err := json.Unmarshal([]byte(run(append([]string{"general", "--json"}, lua...)...)), &g); err != nil || g["settings"] == nil {
			t.Errorf("general --json: %v, %v", g, err)
		}
	})
	cfgSum := strings.TrimSuffix(strings.Fields(replayed)[3], ":") // "Routes of configuration <sum>: ..."
	t.Run("fleet", func(t *testing.T) { checkFleet(t, url, cfgSum, len(story)) })
}

func checkConf(t *testing.T, out, dir string) {
	file, err := os.ReadFile(dir + "/nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(out, "\n")
	if !strings.Contains(first, "served by nginx (worker pid ") || rest != string(file) {
		t.Errorf("conf: first line %q; the rest is the file: %v", first, rest == string(file))
	}
	if !strings.Contains(rest, "error_log stderr") || !strings.Contains(rest, "access_log /dev/stdout upstreaminfo;") {
		t.Errorf("the running nginx.conf does not log to stdout and stderr")
	}
}

func checkCerts(t *testing.T, table, asJSON string) {
	for _, want := range []string{"CERTIFICATE", "shop/shop-tls", "shop.example.com", "CN=shop.example.com,O=ingress-sync", "in 364 days", "shop/api,shop/web", "(default)"} {
		if !strings.Contains(table, want) {
			t.Errorf("certs lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(asJSON, "PRIVATE KEY") || strings.Contains(asJSON, "-----BEGIN") {
		t.Errorf("certs --json holds PEM:\n%s", asJSON)
	}
	var certs []inspect.Certificate
	if err := json.Unmarshal([]byte(asJSON), &certs); err != nil || len(certs) != 2 {
		t.Fatalf("certs --json: %v\n%s", err, asJSON)
	}
	if c := certs[1]; c.Name != "shop/shop-tls" || c.NotAfter.Before(time.Now()) || len(c.Ingresses) != 2 {
		t.Errorf("shop-tls: %+v", c)
	}
}

// checkFleet waits for the report of the test's syncer (on the
// Configuration cfgSum), adds a stale one, one that agrees and one that
// disagrees, and reads the fleet.
func checkFleet(t *testing.T, url, cfgSum string, lastSeq int) {
	var out string
	waitUntil(t, "the syncer's report", func() bool {
		out, _, _ = runCmd(t, "", "fleet", "--nats-url", url)
		return strings.Contains(out, "routes-test")
	})
	if !strings.Contains(out, "Stream INGRESS at seq "+strconv.Itoa(lastSeq)+": 1 syncer, 1 of 1 fresh") {
		t.Errorf("fleet of one:\n%s", out)
	}
	_, js := natstest.Connect(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), cmdTestTimeout)
	defer cancel()
	for _, st := range []events.SyncerStatus{
		{Pod: "syncer-old", Ready: true, CaughtUp: true, Checksum: "0ld", Sequence: 2, LastError: "nginx reload failed", Time: time.Now().Add(-time.Hour)},
		{Pod: "syncer-other", Ready: true, CaughtUp: true, Checksum: "other", Sequence: uint64(lastSeq), Time: time.Now()},
		{Pod: "syncer-twin", Ready: true, CaughtUp: true, Checksum: cfgSum, Sequence: uint64(lastSeq - 1), Time: time.Now()},
	} {
		data, _ := events.EncodeStatus(st)
		if _, err := js.Publish(ctx, events.StatusSubject("ingress", st.Pod), data); err != nil {
			t.Fatal(err)
		}
	}
	out, stderr, err := runCmd(t, "", "fleet", "--nats-url", url, "--stale", "5m")
	if err != nil {
		t.Fatalf("fleet: %v\n%s", err, stderr)
	}
	for _, want := range []string{"4 syncers, 2 of 3 fresh on checksum " + cfgSum, "POD", "LAST ERROR", "STALE", "nginx reload failed", "DISAGREES"} {
		if !strings.Contains(out, want) {
			t.Errorf("fleet lacks %q:\n%s", want, out)
		}
	}
	var f inspect.Fleet
	out, _, err = runCmd(t, "", "fleet", "--nats-url", url, "--json")
	if err := errors.Join(err, json.Unmarshal([]byte(out), &f)); err != nil || len(f.Syncers) != 4 {
		t.Fatalf("fleet --json: %v\n%s", err, out)
	}
	want := map[string]string{"routes-test": "0 false false", "syncer-old": strconv.Itoa(lastSeq-2) + " true false",
		"syncer-other": "0 false true", "syncer-twin": "1 false false"} // lag, stale, disagrees
	for _, s := range f.Syncers {
		if got := strconv.FormatUint(s.Lag, 10) + " " + strconv.FormatBool(s.Stale) + " " + strconv.FormatBool(s.Disagrees); got != want[s.Pod] {
			t.Errorf("%s: lag, stale, disagrees = %s; want %s", s.Pod, got, want[s.Pod])
		}
	}
	if f.Majority != cfgSum || f.Syncers[0].Pod != "routes-test" || f.Syncers[0].Checksum != cfgSum {
		t.Errorf("majority %s, first %+v; want routes-test on %s", f.Majority, f.Syncers[0], cfgSum)
	}
}

func TestInspectErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
		is   error
	}{
		{[]string{"conf", "--nginx-dir", t.TempDir()}, "is this the syncer's --nginx-dir", nil},
		{[]string{"certs", "--status-port", closedPort(t), "--timeout", "1s"}, "is nginx running", nil},
		{[]string{"general", "--output", "yaml"}, "want table or json", errUsage},
		{[]string{"fleet", "--stale", "0s"}, "must be positive", errUsage},
		{[]string{"fleet", "--output", "text"}, "want table or json", errUsage},
		{[]string{"fleet", "--nats-url", "nats://127.0.0.1:" + closedPort(t), "--timeout", "1s"}, "connecting to NATS", nil},
	}
	for _, tc := range tests {
		if _, _, err := runCmd(t, "", tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) || tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%v: %v; want %q", tc.args, err, tc.want)
		}
	}
}
