package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
	"github.com/ingress-sync/ingress-sync/test/testkit/natstest"
)

// logsConfigMap is the controller ConfigMap with data, at resource
// version rv.
func logsConfigMap(data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "ingress-sync", UID: "uid-cm"}, Data: data}
}

// TestSyncerAccessLog runs `syncer run` with a real nginx: a request shows
// up on the syncer's stdout in the ConfigMap's log-format-upstream (JSON,
// escaped with log-format-escape-json) and nowhere else; nginx's error log
// reaches the syncer's stderr as JSON log records; with disable-access-log
// nothing is written; with access-log-path the file gets the lines.
func TestSyncerAccessLog(t *testing.T) {
	backend, err := echo.Start("web", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = backend.Close() })
	format := `{"uri": "$request_uri", "status": $status, "agent": "$http_user_agent"}`
	cm := map[string]string{"log-format-upstream": format, "log-format-escape-json": "true"}
	story := []storyEvent{
		{events.OpCreate, fixtures.IngressClass("nginx", "k8s.io/ingress-sync", false)},
		{events.OpCreate, fixtures.Service("shop", "web", 80)},
		{events.OpCreate, fixtures.EndpointSlice("shop", "web-1", "web", int32(backend.Port()), "127.0.0.1")},
		{events.OpCreate, fixtures.Ingress("shop", "web", fixtures.Rule("shop.example.com", fixtures.Prefix("/", "web", 80)))},
		{events.OpCreate, logsConfigMap(cm)},
	}
	url := publishEvents(t, story)
	_, js := natstest.Connect(t, url)
	s := runSyncer(t, []string{"--nats-url", url, "--configmap", "kube-system/ingress-sync", "--log-level", "info"})
	request := func(path string) {
		t.Helper()
		waitUntil(t, "GET "+path+" answers 200", func() bool { return getStatus(s.http, path) == http.StatusOK })
	}
	request("/logged")
	want := `{"uri": "/logged", "status": 200, "agent": "a\"b"}` + "\n"
	waitUntil(t, "the access log line on stdout", func() bool { return fileHas(s.stdout, want) })
	if fileHas(s.stderr, "/logged") {
		t.Error("the access log line went to stderr too")
	}
	if !fileHas(s.stderr, `"msg":"nginx error log"`) || !fileHas(s.stderr, `[notice]`) {
		t.Error("nginx's error log did not reach the syncer's stderr")
	}

	// setConfigMap publishes the ConfigMap as stream message seq and waits
	// until the syncer has applied it (a confirmed reload: no worker of the
	// previous nginx.conf takes requests any more).
	setConfigMap := func(seq int, data map[string]string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), cmdTestTimeout)
		defer cancel()
		publish(t, ctx, js, events.OpUpdate, logsConfigMap(data), 100+seq)
		applied := fmt.Sprintf(`"seq":%d,"reload":true`, seq)
		waitUntil(t, "the reload", func() bool { return fileHas(s.stderr, applied) })
	}
	setConfigMap(6, map[string]string{"log-format-upstream": format, "log-format-escape-json": "true", "disable-access-log": "true"})
	before, _ := os.ReadFile(s.stdout)
	request("/quiet")
	file := filepath.Join(s.dir, "access.log")
	setConfigMap(7, map[string]string{"log-format-upstream": format, "log-format-escape-json": "true", "access-log-path": file})
	if after, _ := os.ReadFile(s.stdout); !bytes.Equal(after, before) {
		t.Errorf("with disable-access-log the syncer wrote %q", bytes.TrimPrefix(after, before))
	}
	request("/to-file")
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := os.ReadFile(s.stderr)
			t.Logf("syncer stderr:\n%s", logs)
		}
	})
	waitUntil(t, "the access log line in "+file, func() bool { return fileHas(file, `"uri": "/to-file"`) })
	if fileHas(s.stdout, "/to-file") {
		t.Error("with access-log-path the line went to stdout too")
	}
}

// getStatus sends GET path to the nginx on port with Host shop.example.com
// and a User-Agent that log-format-escape-json must escape.
func getStatus(port, path string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+port+path, nil)
	req.Host = "shop.example.com"
	req.Close = true // a kept-alive connection could reach a worker of the previous nginx.conf
	req.Header.Set("User-Agent", `a"b`)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func fileHas(path, s string) bool {
	data, _ := os.ReadFile(path)
	return strings.Contains(string(data), s)
}

// waitUntil polls cond (bounded by cmdTestTimeout) and fails the test when
// it never holds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(cmdTestTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, cmdTestTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
