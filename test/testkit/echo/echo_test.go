package echo

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

func TestReply(t *testing.T) {
	s, err := Start("b1", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	req, _ := http.NewRequest("GET", "http://"+s.Addr+"/a/b?x=1", nil)
	req.Host = "a.example.com"
	req.Header.Set("X-Test", "yes")
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r Reply
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	if r.Backend != "b1" || r.Host != "a.example.com" || r.Path != "/a/b" || r.Query != "x=1" || r.Headers["X-Test"][0] != "yes" {
		t.Fatalf("reply %+v", r)
	}
	if s.Requests() != 1 {
		t.Fatalf("requests %d, want 1", s.Requests())
	}
}
