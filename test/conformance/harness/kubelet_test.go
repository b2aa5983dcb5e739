package harness

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestKubeletLogs: an echoed request is a line of its Pod's log, which the
// kubelet's /containerLogs answers from sinceTime on, with timestamps when
// asked; another Pod's log and other paths are apart.
func TestKubeletLogs(t *testing.T) {
	k, err := NewKubelet(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if f := k.APIServerFlags(); len(f) != 2 || !strings.HasPrefix(f[0], "--kubelet-certificate-authority=") {
		t.Fatalf("flags %q", f)
	}
	h := echoHandler{info: echoInfo{Namespace: "ns", Pod: "pod-1"}, port: "3000", log: k.book.of("ns/pod-1")}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/old", nil))
	since := time.Now().Add(time.Second).Truncate(time.Second)
	k.book.of("ns/pod-1").lines[0].at = since.Add(-time.Minute) // logged before sinceTime
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/mirror?x=1", nil))
	k.book.of("ns/pod-1").lines[1].at = since
	tests := []struct {
		name, target string
		status       int
		want         []string
	}{
		{"since a time", "/containerLogs/ns/pod-1/c?sinceTime=" + since.Format(time.RFC3339), 200,
			[]string{"Echoing back request made to /mirror?x=1 to client (192.0.2.1:1234)"}},
		{"every line", "/containerLogs/ns/pod-1/c", 200, []string{"Echoing back request made to /old to client (192.0.2.1:1234)",
			"Echoing back request made to /mirror?x=1 to client (192.0.2.1:1234)"}},
		{"timestamps", "/containerLogs/ns/pod-1/c?timestamps=true&sinceTime=" + since.Format(time.RFC3339), 200,
			[]string{since.Format(time.RFC3339Nano) + " Echoing back request made to /mirror?x=1 to client (192.0.2.1:1234)"}},
		{"another pod", "/containerLogs/ns/pod-2/c", 200, nil},
		{"a bad time", "/containerLogs/ns/pod-1/c?sinceTime=yesterday", 400, nil},
		{"another path", "/pods", 404, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			k.containerLogs(rec, httptest.NewRequest(http.MethodGet, tc.target, nil))
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d", rec.Code, tc.status)
			}
			if tc.status != 200 {
				return
			}
			got := strings.Split(strings.TrimSuffix(rec.Body.String(), "\n"), "\n")
			if rec.Body.Len() == 0 {
				got = nil
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("lines %q, want %q", got, tc.want)
			}
		})
	}
}
