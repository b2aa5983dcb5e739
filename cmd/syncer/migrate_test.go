package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/migrate"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

func runMigrate(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), cmdTestTimeout)
	defer cancel()
	err := dispatch(ctx, append([]string{"migrate-check"}, args...), strings.NewReader(""), &stdout, &stderr)
	return stdout.String() + stderr.String(), err
}

// TestMigrateCheckExitStatus: the command fails (main exits 1) exactly
// when something would not behave as in ingress-nginx, or it cannot run.
func TestMigrateCheckExitStatus(t *testing.T) {
	const testdata = "../../pkg/migrate/testdata/"
	tests := map[string]struct {
		args []string
		want error // nil: success
	}{
		"clean manifests":             {[]string{"--dir", testdata + "clean"}, nil},
		"clean manifests as JSON":     {[]string{"--dir", testdata + "clean", "--json"}, nil},
		"the corpus has differences":  {[]string{"--dir", testdata + "corpus"}, migrate.ErrDifferences},
		"another class, no ConfigMap": {[]string{"--dir", testdata + "corpus", "--ingress-class", "traefik", "--configmap", ""}, nil},
		"no input":                    {nil, errUsage},
		"two inputs":                  {[]string{"--dir", "x", "--from-stream"}, errUsage},
		"namespace without cluster":   {[]string{"--dir", "x", "--namespace", "a"}, errUsage},
		"missing directory":           {[]string{"--dir", testdata + "nope"}, migrate.ErrInput},
		"unreadable kubeconfig":       {[]string{"--kubeconfig", testdata + "nope"}, migrate.ErrInput},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, err := runMigrate(t, tc.args...)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v; output:\n%s", err, tc.want, out)
			}
		})
	}
}

func TestMigrateCheckJSON(t *testing.T) {
	out, err := runMigrate(t, "--dir", "../../pkg/migrate/testdata/corpus", "--json")
	if !errors.Is(err, migrate.ErrDifferences) {
		t.Fatalf("err = %v", err)
	}
	var r migrate.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if r.Summary.OK || r.Summary.Refused != 1 || r.Ingresses == 0 {
		t.Errorf("summary %+v, %d Ingresses", r.Summary, r.Ingresses)
	}
}

// TestMigrateCheckFromStream reads an embedded NATS server's stream.
func TestMigrateCheckFromStream(t *testing.T) {
	url := publishEvents(t, []storyEvent{
		{events.OpCreate, fixtures.Service("shop", "web", 80)},
		{events.OpCreate, fixtures.Ingress("shop", "web", fixtures.Annotation("nginx.ingress.kubernetes.io/relative-redirects", "true"),
			fixtures.Rule("shop.example.com", fixtures.Prefix("/", "web", 80)))},
	})
	out, err := runMigrate(t, "--from-stream", "--nats-url", url, "--timeout", "10s")
	if !errors.Is(err, migrate.ErrDifferences) || !strings.Contains(out, "Ingress shop/web  annotation relative-redirects  not supported") {
		t.Errorf("err = %v; output:\n%s", err, out)
	}
}
