package harness

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/websocket"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ingress-sync/ingress-sync/internal/certs"
)

func TestEchoHandler(t *testing.T) {
	h := echoHandler{info: echoInfo{Namespace: "ns", Pod: "pod-1"}, port: "3000"}
	tests := []struct {
		name       string
		target     string
		setHeader  []string
		wantStatus int
		wantPath   string // "" when the answer is not echo JSON
		wantHeader map[string]string
	}{
		{name: "echo", target: "/a/b?c=d", wantStatus: 200, wantPath: "/a/b?c=d"},
		{name: "double slash answered, not redirected", target: "//a//b", wantStatus: 200, wantPath: "//a//b"},
		{name: "status code", target: "/status/418", wantStatus: 418},
		{name: "status code malformed", target: "/status/4180", wantStatus: 400},
		{name: "health", target: "/health", wantStatus: 200},
		{name: "set headers", target: "/", setHeader: []string{"X-A:1,X-B:2", "X-A:3"}, wantStatus: 200, wantPath: "/",
			wantHeader: map[string]string{"X-A": "1,3", "X-B": "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, tt.target, nil)
			for _, v := range tt.setHeader {
				req.Header.Add("X-Echo-Set-Header", v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status %d, want %d", rec.Code, tt.wantStatus)
			}
			for k, v := range tt.wantHeader {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			if tt.wantPath == "" {
				return
			}
			var got echoReply
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatalf("%v: %s", err, rec.Body)
			}
			if got.Path != tt.wantPath || got.Namespace != "ns" || got.Pod != "pod-1" || got.Method != "GET" || got.HTTPPort != "3000" {
				t.Fatalf("reply %+v, want path %q from ns/pod-1", got, tt.wantPath)
			}
		})
	}
}

func TestEchoH2CPortRefusesHTTP1(t *testing.T) {
	rec := httptest.NewRecorder()
	echoHandler{h2cOnly: true}.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("status %d, want 400 for HTTP/1.1 on the h2c port", rec.Code)
	}
}

func TestAllocator(t *testing.T) {
	a := newAllocator(netip.MustParsePrefix("10.0.0.0/30"), 1)
	first, err := a.get("a")
	if err != nil || first.String() != "10.0.0.1" {
		t.Fatalf("first = %v, %v; want 10.0.0.1", first, err)
	}
	if again, _ := a.get("a"); again != first {
		t.Fatalf("the same key got %v then %v", first, again)
	}
	second, err := a.get("b")
	if err != nil || second.String() != "10.0.0.2" {
		t.Fatalf("second = %v, %v; want 10.0.0.2", second, err)
	}
	if _, err := a.get("c"); err == nil {
		t.Fatal("a /30 gave out a third address (the broadcast one)")
	}
	a.keep(map[string]bool{"b": true})
	if got, err := a.get("c"); err != nil || got != first {
		t.Fatalf("after release: %v, %v; want %v again", got, err, first)
	}
}

// TestEchoWebSocket: /ws sends back a text message as text and a binary
// one as binary.
func TestEchoWebSocket(t *testing.T) {
	srv := httptest.NewServer(echoHandler{port: "3000"})
	defer srv.Close()
	ws, err := websocket.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/ws", "", "http://test/")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := ws.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	var text string
	if err := websocket.Message.Send(ws, "hello"); err != nil {
		t.Fatal(err)
	}
	if err := websocket.Message.Receive(ws, &text); err != nil || text != "hello" {
		t.Fatalf("text reply %q, %v", text, err)
	}
	var m wsMessage
	if err := websocket.Message.Send(ws, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := wsRaw.Receive(ws, &m); err != nil || m.typ != websocket.BinaryFrame || string(m.data) != "\x01\x02\x03" {
		t.Fatalf("binary reply %v (frame type %d), %v", m.data, m.typ, err)
	}
}

// TestEchoTLS: a request over TLS is echoed with its SNI name, as
// echo-basic's HTTPS port does (the suite checks the SNI a backend got).
func TestEchoTLS(t *testing.T) {
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.TLS = &tls.ConnectionState{ServerName: "abc.example.com", Version: tls.VersionTLS13}
	rec := httptest.NewRecorder()
	echoHandler{port: "3000"}.ServeHTTP(rec, req)
	var got struct {
		TLS struct {
			ServerName, Version string
		} `json:"tls"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.TLS.ServerName != "abc.example.com" || got.TLS.Version != "TLS 1.3" {
		t.Fatalf("reply %s (%v), want tls.serverName abc.example.com", rec.Body, err)
	}
}

// TestEchoCertificate: the certificate of an echo-basic Pod given one is
// read from the Secret of the volume its TLS_SERVER_* files are in, by the
// volume's items; a Pod without them has none.
func TestEchoCertificate(t *testing.T) {
	pair, err := certs.Generate(certs.Options{Hosts: []string{"abc.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "tls"},
		Data: map[string][]byte{"tls.crt": pair.CertPEM, "tls.key": pair.KeyPEM}}
	pod := func(env ...corev1.EnvVar) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "p"}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Image: "registry.k8s.io/gateway-api/echo-basic:v1.5.1", Env: env,
				VolumeMounts: []corev1.VolumeMount{{Name: "v", MountPath: "/etc/secret-volume"}}}},
			Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "tls",
				Items: []corev1.KeyToPath{{Key: "tls.crt", Path: "crt"}, {Key: "tls.key", Path: "key"}}}}}}}}
	}
	c := &Cluster{kube: fake.NewClientset(secret)}
	got, err := c.echoCertificate(t.Context(), pod(corev1.EnvVar{Name: "TLS_SERVER_CERT", Value: "/etc/secret-volume/crt"},
		corev1.EnvVar{Name: "TLS_SERVER_PRIVKEY", Value: "/etc/secret-volume/key"}))
	if err != nil || got == nil || len(got.Certificate) == 0 {
		t.Fatalf("echoCertificate = %v, %v", got, err)
	}
	if got, err := c.echoCertificate(t.Context(), pod()); got != nil || err != nil {
		t.Fatalf("without TLS_SERVER_*: %v, %v", got, err)
	}
	if _, err := c.echoCertificate(t.Context(), pod(corev1.EnvVar{Name: "TLS_SERVER_CERT", Value: "/elsewhere/crt"},
		corev1.EnvVar{Name: "TLS_SERVER_PRIVKEY", Value: "/etc/secret-volume/key"})); err == nil {
		t.Fatal("a file outside the Secret volume: no error")
	}
}
