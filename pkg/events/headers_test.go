package events_test

import (
	"reflect"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

func TestHeaders(t *testing.T) {
	for _, tc := range []struct {
		name string
		ev   events.Event
		want map[string][]string
	}{
		{
			name: "namespaced",
			ev:   events.Event{Op: events.OpUpdate, Kind: events.KindIngress, Namespace: "shop", Name: "web.v2", UID: "u-1", ResourceVersion: "42"},
			want: map[string][]string{
				"Ingress-Sync-Op": {"update"}, "K8s-Kind": {"Ingress"}, "K8s-Namespace": {"shop"}, "K8s-Name": {"web.v2"},
				"K8s-Resource-Version": {"42"}, "K8s-Uid": {"u-1"}, "Content-Type": {"application/msgpack"}, "Nats-Msg-Id": {"u-1/42/update"},
			},
		},
		{
			name: "cluster-scoped",
			ev:   events.Event{Op: events.OpCreate, Kind: events.KindIngressClass, Name: "nginx", UID: "u-2", ResourceVersion: "7"},
			want: map[string][]string{
				"Ingress-Sync-Op": {"create"}, "K8s-Kind": {"IngressClass"}, "K8s-Name": {"nginx"},
				"K8s-Resource-Version": {"7"}, "K8s-Uid": {"u-2"}, "Content-Type": {"application/msgpack"}, "Nats-Msg-Id": {"u-2/7/create"},
			},
		},
		{
			name: "delete known by key only",
			ev:   events.Event{Op: events.OpDelete, Kind: events.KindService, Namespace: "shop", Name: "web"},
			want: map[string][]string{
				"Ingress-Sync-Op": {"delete"}, "K8s-Kind": {"Service"}, "K8s-Namespace": {"shop"}, "K8s-Name": {"web"},
				"Content-Type": {"application/msgpack"}, "Nats-Msg-Id": {"service/shop/web//delete"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := events.Headers(tc.ev); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Headers = %v\nwant %v", got, tc.want)
			}
		})
	}
}

func TestHeaderNames(t *testing.T) {
	for got, want := range map[string]string{
		events.HeaderOp: "Ingress-Sync-Op", events.HeaderKind: "K8s-Kind", events.HeaderNamespace: "K8s-Namespace",
		events.HeaderName: "K8s-Name", events.HeaderResourceVersion: "K8s-Resource-Version", events.HeaderUID: "K8s-Uid",
		events.HeaderContentType: "Content-Type", events.HeaderMsgID: "Nats-Msg-Id",
	} {
		if got != want {
			t.Errorf("header %q, want %q", got, want)
		}
	}
}
