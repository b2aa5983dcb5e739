package admission

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkServeHTTP is one review of a typical Ingress with a few
// annotations, decoded, translated, built alone and answered.
func BenchmarkServeHTTP(b *testing.B) {
	ing := newIngress("shop.example.com", "/api/(v[12])/.*", map[string]string{prefix + "use-regex": "true",
		prefix + "proxy-read-timeout": "120", prefix + "proxy-body-size": "8m", prefix + "whitelist-source-range": "10.0.0.0/8"})
	h := NewHandler(Options{Logger: quiet})
	body := reviewOf(b, "CREATE", ing)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body)))
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}
