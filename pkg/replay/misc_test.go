package replay

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParsePoint(t *testing.T) {
	tests := []struct {
		name, in string
		want     Point
		json     string
		err      error
	}{
		{"empty", "", Point{}, "null", nil},
		{"sequence", "42", Point{Seq: 42}, "42", nil},
		{"time", "2026-11-01T03:12:00Z", Point{Time: time.Date(2026, 11, 1, 3, 12, 0, 0, time.UTC)}, `"2026-11-01T03:12:00Z"`, nil},
		{"time with offset and fraction", "2026-11-01T04:12:00.5+01:00", Point{Time: time.Date(2026, 11, 1, 3, 12, 0, 5e8, time.UTC)}, `"2026-11-01T03:12:00.5Z"`, nil},
		{"zero sequence", "0", Point{}, "", ErrInvalidPoint},
		{"negative", "-3", Point{}, "", ErrInvalidPoint},
		{"date only", "2026-11-01", Point{}, "", ErrInvalidPoint},
		{"too large", "99999999999999999999999", Point{}, "", ErrInvalidPoint},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePoint(tc.in)
			if !errors.Is(err, tc.err) || got.Seq != tc.want.Seq || !got.Time.Equal(tc.want.Time) {
				t.Fatalf("ParsePoint(%q) = %+v, %v; want %+v, %v", tc.in, got, err, tc.want, tc.err)
			}
			if err != nil {
				return
			}
			if b, _ := json.Marshal(got); string(b) != tc.json {
				t.Errorf("JSON %s, want %s", b, tc.json)
			}
		})
	}
}

func TestProgressBar(t *testing.T) {
	var buf bytes.Buffer
	p := NewProgressBar(&buf, "replay")
	for done := uint64(1); done <= 400; done++ {
		p.Update(done, 400)
	}
	p.Finish()
	out := buf.String()
	if n := strings.Count(out, "\r"); n != 101 {
		t.Errorf("%d redraws for 400 updates, want one per percent, 0 to 100", n)
	}
	if !strings.HasSuffix(out, "\rreplay [==============================] 100% 400/400\n") {
		t.Errorf("last frame %q", out[strings.LastIndex(out, "\r"):])
	}
	buf.Reset()
	NewProgressBar(&buf, "x").Finish()
	if buf.Len() != 0 {
		t.Errorf("Finish without progress wrote %q", buf.String())
	}
}

func TestWriteBackendsTable(t *testing.T) {
	var eps []config.Endpoint
	for i := range 10 {
		eps = append(eps, config.Endpoint{Address: "10.0.0." + string(rune('0'+i)), Port: 8080})
	}
	backends := []config.Backend{
		{Name: "shop-web-80", LoadBalance: "round_robin", Endpoints: eps[:2]},
		{Name: "shop-api-80", LoadBalance: "ewma", Endpoints: nil},
		{Name: "shop-cart-http", LoadBalance: "round_robin", UpstreamHashBy: "$request_uri", Endpoints: eps},
		{Name: "shop-v6-80", Affinity: &config.Affinity{CookieName: "route"}, Endpoints: []config.Endpoint{{Address: "fd00::1", Port: 80}}},
	}
	var buf bytes.Buffer
	if err := WriteBackendsTable(&buf, backends); err != nil {
		t.Fatal(err)
	}
	golden(t, "backends.txt", buf.Bytes())
}
