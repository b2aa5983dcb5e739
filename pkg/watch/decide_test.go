package watch

import (
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

func TestDecide(t *testing.T) {
	d1, d2 := digest{1}, digest{2}
	live := func(op events.Op, d digest) *record {
		return &record{UID: "u1", RV: "10", Op: op, Digest: d, HasDigest: true}
	}
	tests := []struct {
		name string
		rec  *record
		cur  *state
		want plan
	}{
		{name: "never seen, gone", want: plan{}},
		{name: "new object", cur: &state{UID: "u1", RV: "10", Digest: d1, HasDigest: true}, want: plan{Op: events.OpCreate}},
		{name: "unchanged", rec: live(events.OpCreate, d1), cur: &state{UID: "u1", RV: "10", Digest: d1, HasDigest: true}, want: plan{}},
		{name: "no-op update", rec: live(events.OpUpdate, d1), cur: &state{UID: "u1", RV: "11", Digest: d1, HasDigest: true}, want: plan{Noop: true}},
		{name: "real update", rec: live(events.OpCreate, d1), cur: &state{UID: "u1", RV: "11", Digest: d2, HasDigest: true}, want: plan{Op: events.OpUpdate}},
		{name: "deleted", rec: live(events.OpUpdate, d1), want: plan{Op: events.OpDelete}},
		{name: "delete already published", rec: live(events.OpDelete, d1), want: plan{}},
		{name: "delete not acknowledged", rec: &record{UID: "u1", Op: events.OpDelete, Failed: true}, want: plan{Op: events.OpDelete}},
		{name: "recreated after delete", rec: live(events.OpDelete, d1), cur: &state{UID: "u2", RV: "12", Digest: d1, HasDigest: true}, want: plan{Op: events.OpCreate}},
		{name: "recreated after failed delete", rec: &record{UID: "u1", Op: events.OpDelete, Failed: true}, cur: &state{UID: "u2", RV: "12"}, want: plan{DeleteOld: true, Op: events.OpCreate}},
		{name: "recreated while not watching", rec: live(events.OpUpdate, d1), cur: &state{UID: "u2", RV: "12", Digest: d1, HasDigest: true}, want: plan{DeleteOld: true, Op: events.OpCreate}},
		{name: "create not acknowledged", rec: &record{UID: "u1", RV: "10", Op: events.OpCreate, Failed: true}, cur: &state{UID: "u1", RV: "10"}, want: plan{Op: events.OpCreate}},
		{name: "update not acknowledged", rec: &record{UID: "u1", RV: "10", Op: events.OpUpdate, Failed: true}, cur: &state{UID: "u1", RV: "10"}, want: plan{Op: events.OpUpdate}},
		{name: "head without digest, same version", rec: &record{UID: "u1", RV: "10", Op: events.OpUpdate}, cur: &state{UID: "u1", RV: "10", Digest: d1, HasDigest: true}, want: plan{}},
		{name: "head without digest, other version", rec: &record{UID: "u1", RV: "9", Op: events.OpUpdate}, cur: &state{UID: "u1", RV: "10", Digest: d1, HasDigest: true}, want: plan{Op: events.OpUpdate}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := decide(tc.rec, tc.cur); got != tc.want {
				t.Errorf("decide() = %+v, want %+v", got, tc.want)
			}
		})
	}
}
