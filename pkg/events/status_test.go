package events_test

import (
	"reflect"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// TestStatusDecodesOldReports: a report of a syncer from before
// problemList and unserved still decodes, with the count only; a new one
// round-trips.
func TestStatusDecodesOldReports(t *testing.T) {
	old := `{"pod":"syncer-0","ready":true,"caughtUp":true,"checksum":"abc","sequence":17,"reloads":1,"dynamicUpdates":4,"problems":2,"time":"2026-12-01T10:00:00Z"}`
	st, err := events.DecodeStatus([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	if st.Pod != "syncer-0" || st.Sequence != 17 || st.Problems != 2 || st.ProblemList != nil || st.Unserved != nil {
		t.Fatalf("old report decoded as %+v", st)
	}
	st.ProblemList = []events.ReportedProblem{{Kind: "Ingress", Namespace: "shop", Name: "web", Reason: "x"}, {Kind: "ConfigMap", Namespace: "kube-system", Name: "ingress-sync", Reason: "y"}}
	st.Unserved = []events.UnservedIngress{{Namespace: "shop", Name: "web", Why: events.UnservedRoutes}}
	data, err := events.EncodeStatus(st)
	if err != nil {
		t.Fatal(err)
	}
	back, err := events.DecodeStatus(data)
	if err != nil || !reflect.DeepEqual(back, st) {
		t.Fatalf("round trip: %+v, %v; want %+v", back, err, st)
	}
}
