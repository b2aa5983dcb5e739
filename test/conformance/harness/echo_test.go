package harness

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/websocket"
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
