package watch_test

import (
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/test/testkit/natstest"
)

// TestOversizedObject: an object over the server's max_payload gets an
// error log naming it, a metric, and everything else goes on; once small
// enough it is published.
func TestOversizedObject(t *testing.T) {
	const maxPayload = 32 << 10
	e := newEnv(t, natstest.WithMaxPayload(maxPayload))
	ctx, c, ns := t.Context(), e.client, e.ns
	w := start(t, e.config("watcher-a"))
	big := configMap(ns, "ingress-sync", map[string]string{"blob": strings.Repeat("x", 2*maxPayload)})
	e.create(t, big)
	e.create(t, service(ns, "after"))
	e.waitMessage(t, e.subject(events.KindService, "after"), events.OpCreate)

	eventually(t, "the oversize metric", func() bool {
		return w.metric(t, "ingress_sync_watcher_oversize_objects_total", "kind", "ConfigMap") == 1
	})
	lines := w.logs.lines("level=ERROR", "object too large to publish", "kind=ConfigMap", "namespace="+ns, "name=ingress-sync")
	if len(lines) != 1 || !strings.Contains(lines[0], "sizeBytes=") || strings.Contains(lines[0], "sizeBytes=-1") {
		t.Errorf("want one error line naming the ConfigMap and its size, got %q", lines)
	}
	if msgs := on(e.messages(t), e.subject(events.KindConfigMap, "ingress-sync")); len(msgs) > 0 {
		t.Errorf("oversized ConfigMap in the stream: %v", msgs)
	}

	cm, err := c.CoreV1().ConfigMaps(ns).Get(ctx, "ingress-sync", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"proxy-body-size": "1m"}
	if _, err := c.CoreV1().ConfigMaps(ns).Update(ctx, cm, updateOpts); err != nil {
		t.Fatal(err)
	}
	e.waitMessage(t, e.subject(events.KindConfigMap, "ingress-sync"), events.OpCreate)
}
