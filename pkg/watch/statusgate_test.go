package watch_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/watch"
)

const statusIP = "198.18.0.10"

// statusScene is a watcher writing statusIP with cfg's changes, on the
// env's class, and the sequence of the class in the stream (every report
// at it predates the Ingresses of the test).
func statusScene(t *testing.T, change func(*watch.Config)) (*env, *runningWatcher, string, uint64) {
	t.Helper()
	e := newEnv(t)
	class := "ours-" + e.ns
	createClass(t, e, class, e.controller())
	cfg := e.config("watcher-a")
	cfg.PublishStatusAddress = []string{statusIP}
	if change != nil {
		change(&cfg)
	}
	w := start(t, cfg)
	m := e.waitMessage(t, e.subject(events.KindIngressClass, class), events.OpCreate)
	return e, w, class, m.Seq
}

// waitDecision waits until the watcher has decided to hold the address of
// Ingress name with the syncers' reports in this state (its debug log:
// served, leftOut and current are counted as of the Ingress's sequence).
func waitDecision(t *testing.T, w *runningWatcher, name string, served, leftOut, current int) {
	t.Helper()
	parts := []string{"ingress status address waits for the syncers", "name=" + name,
		fmt.Sprintf("served=%d ", served), fmt.Sprintf("leftOut=%d ", leftOut), fmt.Sprintf("current=%d ", current)}
	eventually(t, fmt.Sprintf("the watcher holds the address of %s with %v", name, parts[2:]), func() bool {
		return len(w.logs.lines(parts...)) > 0
	})
}

func noStatus(t *testing.T, e *env, name, when string) {
	t.Helper()
	if got := statusOf(t, e, name); len(got) > 0 {
		t.Fatalf("%s: Ingress %s has the address %v", when, name, got)
	}
}

// TestStatusWaitsForEverySyncer: with the default rule, the address is
// written once every syncer that reports has applied the Ingress and
// serves it. One that has applied an older sequence, or reports the
// Ingress not served, holds it; a syncer that stops (its last report is
// not ready) is no longer waited for.
func TestStatusWaitsForEverySyncer(t *testing.T) {
	e, w, class, before := statusScene(t, nil)
	for _, pod := range []string{"syncer-a", "syncer-b", "syncer-c"} {
		publishReport(t, e, reportOf(pod, before))
	}
	e.create(t, service(e.ns, "web"))
	e.create(t, newIngress(e.ns, "web", class, "web"))
	seq := e.waitMessage(t, e.subject(events.KindIngress, "web"), events.OpCreate).Seq

	publishReport(t, e, reportOf("syncer-a", seq))
	waitDecision(t, w, "web", 1, 0, 3)
	noStatus(t, e, "web", "one syncer of three applied it")

	notServed := reportOf("syncer-b", seq+1)
	notServed.Unserved = []events.UnservedIngress{{Namespace: e.ns, Name: "web", Why: events.UnservedRoutes}}
	publishReport(t, e, notServed)
	waitDecision(t, w, "web", 1, 1, 3)
	noStatus(t, e, "web", "a syncer reports it not served")

	publishReport(t, e, reportOf("syncer-b", seq+1))
	waitDecision(t, w, "web", 2, 0, 3)
	noStatus(t, e, "web", "syncer-c is behind")

	stopped := reportOf("syncer-c", before)
	stopped.Ready = false
	publishReport(t, e, stopped)
	waitStatus(t, e, "web", []string{statusIP})
	if n := len(ofReason(listEvents(t, e, "web"), watch.ReasonAddressUnconfirmed)); n != 0 {
		t.Errorf("%d %s Warnings on a confirmed address", n, watch.ReasonAddressUnconfirmed)
	}
	if n := w.metric(t, "ingress_sync_watcher_status_waiting_ingresses"); n != 0 {
		t.Errorf("%v Ingresses still waiting", n)
	}
}

// TestStatusRuleOne: with --status-syncers=one the first syncer that
// serves the Ingress is enough.
func TestStatusRuleOne(t *testing.T) {
	e, _, class, before := statusScene(t, func(c *watch.Config) { c.StatusSyncers = watch.StatusOne })
	publishReport(t, e, reportOf("syncer-a", before))
	publishReport(t, e, reportOf("syncer-b", before))
	e.create(t, newIngress(e.ns, "web", class, "web"))
	seq := e.waitMessage(t, e.subject(events.KindIngress, "web"), events.OpCreate).Seq
	publishReport(t, e, reportOf("syncer-b", seq))
	waitStatus(t, e, "web", []string{statusIP})
}

// TestStatusMaxWait: a syncer that never applies the Ingress holds its
// address for --status-max-wait, after which it is written with a Warning
// saying how many syncers serve it.
func TestStatusMaxWait(t *testing.T) {
	e, w, class, before := statusScene(t, func(c *watch.Config) { c.StatusMaxWait = 2 * time.Second })
	publishReport(t, e, reportOf("syncer-stuck", before))
	e.create(t, newIngress(e.ns, "web", class, "web"))
	e.waitMessage(t, e.subject(events.KindIngress, "web"), events.OpCreate)
	waitDecision(t, w, "web", 0, 0, 1)
	waitStatus(t, e, "web", []string{statusIP})
	evs := waitEvents(t, e, "web", func(evs []corev1.Event) bool {
		return len(ofReason(evs, watch.ReasonAddressUnconfirmed)) > 0
	})
	warn := ofReason(evs, watch.ReasonAddressUnconfirmed)[0]
	if warn.Type != corev1.EventTypeWarning || !strings.Contains(warn.Message, "0 of 1 syncers serve this Ingress") ||
		!strings.Contains(warn.Message, "--status-syncers=all") {
		t.Fatalf("Warning %s", describeEvents([]corev1.Event{warn}))
	}
}

// TestStatusOnceTheServiceAndSecretExist runs a real syncer (pkg/syncer
// with a recording Applier): an Ingress whose Service does not exist yet,
// and one whose TLS Secret does not, get their address only once the
// syncer has applied the Service or the Secret and serves them.
func TestStatusOnceTheServiceAndSecretExist(t *testing.T) {
	e, w, class, _ := statusScene(t, nil)
	runSyncer(t, e, "syncer-a")
	e.create(t, service(e.ns, "web"))
	e.create(t, newIngress(e.ns, "late-service", class, "late"))
	tls := newIngress(e.ns, "late-secret", class, "web")
	tls.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"late-secret.example.com"}, SecretName: "late"}}
	e.create(t, tls)

	waitDecision(t, w, "late-service", 0, 1, 1)
	waitDecision(t, w, "late-secret", 0, 1, 1)
	if lines := w.logs.lines("name=late-secret", "leftOut=1", "why="+events.UnservedCertificate); len(lines) == 0 {
		t.Errorf("late-secret is not held for its certificate")
	}
	noStatus(t, e, "late-service", "the syncer has no Service")
	noStatus(t, e, "late-secret", "the syncer has no Secret")

	e.create(t, service(e.ns, "late"))
	waitStatus(t, e, "late-service", []string{statusIP})
	noStatus(t, e, "late-secret", "the syncer still has no Secret")
	e.create(t, validTLSSecret(t, e.ns, "late", "late-secret.example.com"))
	waitStatus(t, e, "late-secret", []string{statusIP})
}

// validTLSSecret is a TLS Secret with a certificate for host that the
// syncer accepts.
func validTLSSecret(t *testing.T, ns, name, host string) *corev1.Secret {
	t.Helper()
	pair, err := certs.Generate(certs.Options{Hosts: []string{host}})
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: pair.CertPEM, corev1.TLSPrivateKeyKey: pair.KeyPEM},
	}
}
