package main

import (
	"io"
	"strings"
	"testing"
)

func TestParseRunFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args string
		ok   bool
	}{
		{"stream", "--target stream --nats-url nats://127.0.0.1:4222", true},
		{"stream needs NATS", "--target stream", false},
		{"kube needs a kubeconfig", "--target kube", false},
		{"kube", "--target kube --kubeconfig k --endpoint-rate 50 --ingress-rate 2 --secret-rate 1 --events 100", true},
		{"unknown target", "--target file --nats-url x", false},
		{"bad addresses", "--target stream --nats-url x --addresses 10.0.0.9-10.0.0.1", false},
		{"probes to the benchmarking range outside a namespace", "--target stream --nats-url x --nginx-url http://127.0.0.1:80", false},
		{"probes to other addresses", "--target stream --nats-url x --nginx-url http://127.0.0.1:80 --addresses 10.1.0.1-10.1.0.20", true},
		{"no bound", "--target stream --nats-url x --duration 0", false},
		{"bad output", "--target stream --nats-url x --output yaml", false},
		{"stray argument", "--target stream --nats-url x extra", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parseRunFlags(strings.Fields(tc.args), io.Discard)
			if (err == nil) != tc.ok {
				t.Fatalf("parseRunFlags(%q) = %v, want ok %v", tc.args, err, tc.ok)
			}
			if tc.ok && len(f.spec.Addresses) == 0 {
				t.Fatal("no address pool")
			}
		})
	}
}

func TestDispatchUnknownCommand(t *testing.T) {
	var stderr strings.Builder
	if code := dispatch(t.Context(), []string{"nope"}, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), "unknown command") {
		t.Fatalf("dispatch(nope) = %d, %q", code, stderr.String())
	}
}
