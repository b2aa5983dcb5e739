package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/replay"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

func encode(t *testing.T, ev events.Event) string {
	t.Helper()
	data, err := events.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestDecode(t *testing.T) {
	ing := fixtures.Ingress("shop", "web", fixtures.Rule("shop.example.com", fixtures.Prefix("/", "web", 80)))
	payload := encode(t, events.Event{Op: events.OpUpdate, Kind: events.KindIngress, Namespace: "shop", Name: "web",
		UID: "uid-shop-web", ResourceVersion: "7", Object: ing})
	out, stderr, err := runCmd(t, payload, "decode")
	if err != nil || stderr != "" {
		t.Fatalf("decode: %v, stderr %q", err, stderr)
	}
	var got struct {
		Op, Kind, Namespace, Name, ResourceVersion string
		Object                                     struct {
			Spec struct {
				Rules []struct{ Host string } `json:"rules"`
			} `json:"spec"`
		} `json:"object"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if got.Op != "update" || got.Kind != "Ingress" || got.Namespace != "shop" || got.Name != "web" || got.ResourceVersion != "7" ||
		len(got.Object.Spec.Rules) != 1 || got.Object.Spec.Rules[0].Host != "shop.example.com" {
		t.Errorf("decoded %+v", got)
	}
}

func TestDecodeSecretRedacted(t *testing.T) {
	pair, err := certs.Generate(certs.Options{Hosts: []string{"shop.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	secret := fixtures.TLSSecret("shop", "tls", pair)
	payload := encode(t, events.Event{Op: events.OpCreate, Kind: events.KindSecret, Namespace: "shop", Name: "tls", Object: secret})
	out, _, err := runCmd(t, payload, "decode")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "PRIVATE KEY") || strings.Contains(out, string(pair.KeyPEM[30:60])) || !strings.Contains(out, `"tls.key": "<redacted `) {
		t.Errorf("key material not redacted:\n%s", out)
	}
	out, _, err = runCmd(t, payload, "decode", "--show-secrets")
	if err != nil {
		t.Fatal(err)
	}
	var shown struct {
		Object corev1.Secret `json:"object"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil || string(shown.Object.Data["tls.key"]) != string(pair.KeyPEM) {
		t.Errorf("--show-secrets: %v; tls.key %q", err, shown.Object.Data["tls.key"])
	}
}

func TestDecodeMalformed(t *testing.T) {
	for _, tc := range []struct{ name, stdin string }{{"empty", ""}, {"garbage", "\x93not an event"}, {"json", `{"kind":"Ingress"}`}} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := runCmd(t, tc.stdin, "decode")
			if !errors.Is(err, replay.ErrMalformedPayload) || out != "" {
				t.Errorf("decode = %q, %v; want no output and ErrMalformedPayload", out, err)
			}
		})
	}
	if _, _, err := runCmd(t, "", "decode", "extra"); !errors.Is(err, errUsage) {
		t.Errorf("decode with an argument = %v; want a usage error", err)
	}
}

// TestHelp: -h prints the usage and is not an error.
func TestHelp(t *testing.T) {
	for _, cmd := range []string{"replay", "decode", "backends"} {
		_, stderr, err := runCmd(t, "", cmd, "-h")
		if err != nil || !strings.Contains(stderr, "usage: syncer "+cmd) {
			t.Errorf("%s -h = %v, stderr %q", cmd, err, stderr)
		}
	}
}

// TestDecodeAuthSecretRedacted: an auth Secret's htpasswd file and auth-map
// hashes are redacted as TLS keys are.
func TestDecodeAuthSecretRedacted(t *testing.T) {
	const hash = "$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/"
	secret := &corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"auth": []byte("foo:" + hash + "\n"), "bar": []byte(hash)}}
	secret.Namespace, secret.Name = "shop", "basic-auth"
	payload := encode(t, events.Event{Op: events.OpCreate, Kind: events.KindSecret, Namespace: "shop", Name: "basic-auth", Object: secret})
	out, _, err := runCmd(t, payload, "decode")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "apr1") || strings.Contains(out, "h9FWgUz3n9") || !strings.Contains(out, `"auth": "<redacted `) || !strings.Contains(out, `"bar": "<redacted `) {
		t.Errorf("auth Secret not redacted:\n%s", out)
	}
}
