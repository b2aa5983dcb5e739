package watch_test

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/pkg/syncer"
	"github.com/ingress-sync/ingress-sync/pkg/syncer/syncertest"
	"github.com/ingress-sync/ingress-sync/pkg/watch"
	"github.com/ingress-sync/ingress-sync/test/testkit/natstest"
)

const badTimeout = ingress.AnnotationPrefix + "proxy-read-timeout"

// TestIngressEventsFromSyncerReports runs the watcher and two real syncers
// (pkg/syncer with a recording Applier instead of nginx) on the real
// kube-apiserver and NATS: a rejected annotation gives one Warning with the
// Problem's reason, on the Ingress only; once both syncers have applied the
// change, a Normal Sync event says so; fixing the annotation gives a Normal
// event and no other Warning.
func TestIngressEventsFromSyncerReports(t *testing.T) {
	e := newEnv(t)
	class := "ours-" + e.ns
	createClass(t, e, class, e.controller())
	w := start(t, e.config("watcher-a"))
	runSyncer(t, e, "syncer-a")
	runSyncer(t, e, "syncer-b")

	evs := createBadIngress(t, e, class)
	warnings := ofReason(evs, watch.ReasonProblem)
	if len(warnings) != 1 || warnings[0].Type != corev1.EventTypeWarning || warnings[0].Count != 1 ||
		!strings.Contains(warnings[0].Message, badTimeout) || !strings.Contains(warnings[0].Message, `"soon"`) {
		t.Fatalf("want one Warning naming the annotation and its value, got %s", describeEvents(warnings))
	}
	if w := warnings[0]; w.Source.Component != watch.EventComponent || w.Source.Host != "watcher-a" || w.InvolvedObject.Kind != "Ingress" {
		t.Errorf("Warning from %+v on %+v", w.Source, w.InvolvedObject)
	}
	if s := ofReason(evs, watch.ReasonSync); !strings.Contains(s[0].Message, "Applied by all 2 syncers") || !strings.Contains(s[0].Message, "with 1 problem") {
		t.Errorf("Sync event %q does not count the syncers and the problem", s[0].Message)
	}

	fixed := getIngress(t, e, "web")
	delete(fixed.Annotations, badTimeout)
	updateIngress(t, e, fixed)
	evs = waitEvents(t, e, "web", func(evs []corev1.Event) bool { return len(ofReason(evs, watch.ReasonSync)) == 2 })
	if got := ofReason(evs, watch.ReasonProblem); len(got) != 1 || got[0].Count != 1 {
		t.Errorf("the fix posted Warnings: %s", describeEvents(got))
	}
	var clean bool
	for _, s := range ofReason(evs, watch.ReasonSync) {
		clean = clean || (s.Type == corev1.EventTypeNormal && strings.HasPrefix(s.Message, "Applied by all 2 syncers") && !strings.Contains(s.Message, "problem"))
	}
	if !clean {
		t.Errorf("no Normal event for the fix: %s", describeEvents(evs))
	}
	if n := w.metric(t, "ingress_sync_watcher_kube_events_total", "type", "Warning", "result", "ok"); n != 1 {
		t.Errorf("%v Warning writes reached the API, want 1", n)
	}
	describeForDocs(t, e, "web")
}

// TestIngressEventsForEveryKindOfProblem: each kind of Problem a real
// syncer finds gives a Warning with its reason on the Ingress it concerns.
func TestIngressEventsForEveryKindOfProblem(t *testing.T) {
	e := newEnv(t)
	ns, class := e.ns, "ours-"+e.ns
	createClass(t, e, class, e.controller())
	start(t, e.config("watcher-a"))
	runSyncer(t, e, "syncer-a")
	e.create(t, service(ns, "web"))
	withAnnotation := func(name, key, value string) *networkingv1.Ingress {
		ing := newIngress(ns, name, class, "web")
		ing.Annotations = map[string]string{ingress.AnnotationPrefix + key: value}
		return ing
	}
	withTLS := func(name, secret string) *networkingv1.Ingress {
		ing := newIngress(ns, name, class, "web")
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{name + ".example.com"}, SecretName: secret}}
		return ing
	}
	e.create(t, tlsSecret(ns, "garbage"))
	// Same host and path: a-old is older, or first by name within the second.
	conflict := newIngress(ns, "b-young", class, "web")
	conflict.Spec.Rules[0].Host = "a-old.example.com"
	cases := []struct {
		ing  *networkingv1.Ingress
		want []string
	}{
		{withAnnotation("rejected", "proxy-read-timeout", "soon"), []string{"proxy-read-timeout", `"soon"`}},
		{withAnnotation("unsupported", "made-up", "x"), []string{"made-up", "not supported"}},
		{newIngress(ns, "no-service", class, "missing"), []string{"missing", "not found"}},
		{withTLS("missing-tls", "nope"), []string{"secret " + ns + "/nope not found"}},
		{withTLS("bad-tls", "garbage"), []string{"secret " + ns + "/garbage", "the default certificate is used"}},
		{newIngress(ns, "a-old", class, "web"), nil},
		{conflict, []string{"conflicts with Ingress " + ns + "/a-old, which is older"}},
		{withAnnotation("acl", "whitelist-source-range", "not-an-address"), []string{"whitelist-source-range", "503"}},
	}
	for _, c := range cases {
		e.create(t, c.ing)
	}
	for _, c := range cases {
		if c.want == nil {
			continue
		}
		evs := waitEvents(t, e, c.ing.Name, func(evs []corev1.Event) bool { return len(ofReason(evs, watch.ReasonProblem)) > 0 })
		found := false
		for _, ev := range ofReason(evs, watch.ReasonProblem) {
			match := ev.Type == corev1.EventTypeWarning
			for _, w := range c.want {
				match = match && strings.Contains(ev.Message, w)
			}
			found = found || match
		}
		if !found {
			t.Errorf("Ingress %s: no Warning with %q: %s", c.ing.Name, c.want, describeEvents(evs))
		}
	}
	describeForDocs(t, e, "b-young")
}

// TestConfigMapEventsForBadServiceEntries: a bad entry of the TCP services
// ConfigMap gives one Warning on the ConfigMap with its reason, and the
// good entry beside it none.
func TestConfigMapEventsForBadServiceEntries(t *testing.T) {
	e := newEnv(t)
	cfg := e.config("watcher-a")
	cfg.ConfigMaps = append(cfg.ConfigMaps, e.ns+"/tcp-services")
	start(t, cfg)
	e.create(t, service(e.ns, "db"))
	runSyncerWith(t, e, "syncer-a", model.Options{ControllerClass: e.controller(), IngressClass: "nginx",
		TCPServicesConfigMap: e.ns + "/tcp-services"})
	e.create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "tcp-services"},
		Data: map[string]string{"9000": e.ns + "/db:80", "9001": e.ns + "/db:80:SSL"}})
	var evs []corev1.Event
	eventually(t, "a Warning on the ConfigMap", func() bool {
		evs = ofReason(listEventsOn(t, e, "ConfigMap", "tcp-services"), watch.ReasonProblem)
		return len(evs) > 0
	})
	if len(evs) != 1 || evs[0].Type != corev1.EventTypeWarning || !strings.Contains(evs[0].Message, `TCP port "9001"`) ||
		!strings.Contains(evs[0].Message, `option "SSL" is not PROXY`) {
		t.Fatalf("want one Warning about port 9001, got %s", describeEvents(evs))
	}
}

// TestIngressEventsOncePerProblem: 100 reports (builds) carrying the same
// Problem give one Event, not 100. A Problem of another Ingress, reported
// after them, is the barrier showing that all 100 were handled: Events are
// posted in the order of decisions, and within one by Ingress name.
func TestIngressEventsOncePerProblem(t *testing.T) {
	e, w, seq := reportScene(t)
	conflict := fmt.Sprintf("host web.example.com path / (Prefix): conflicts with Ingress %s/old, which is older and is used", e.ns)
	for i := range 100 {
		publishReport(t, e, reportOf(fmt.Sprintf("syncer-%d", i%2), seq, problem(e.ns, "web", conflict)))
	}
	barrier(t, e, w, seq, 100)
	evs := ofReason(listEvents(t, e, "web"), watch.ReasonProblem)
	if len(evs) != 1 || evs[0].Count != 1 || evs[0].Message != conflict {
		t.Fatalf("100 reports of one Problem gave %s, want one Warning", describeEvents(evs))
	}
}

// TestIngressEventsBoundedRate: 60 different Problems of one Ingress (from
// 60 syncers) reach the API at most as often as client-go's spam filter
// allows, a burst of 25 writes per object and then one per five minutes:
// the rest is dropped or folded into a repeat count, never 60 writes.
func TestIngressEventsBoundedRate(t *testing.T) {
	e, w, seq := reportScene(t)
	for i := range 60 {
		publishReport(t, e, reportOf(fmt.Sprintf("syncer-%d", i), seq, problem(e.ns, "web", fmt.Sprintf("problem number %d", i))))
	}
	barrier(t, e, w, seq, 60)
	var counted int32
	evs := ofReason(listEvents(t, e, "web"), watch.ReasonProblem)
	for _, ev := range evs {
		counted += ev.Count
	}
	writes := w.metric(t, "ingress_sync_watcher_kube_events_total", "type", "Warning") - 1 // the barrier's
	t.Logf("60 Problems: %v API writes (%v create, %v patch, %v failed), %s", writes,
		w.metric(t, "ingress_sync_watcher_kube_events_total", "type", "Warning", "call", "create"),
		w.metric(t, "ingress_sync_watcher_kube_events_total", "type", "Warning", "call", "patch"),
		w.metric(t, "ingress_sync_watcher_kube_events_total", "type", "Warning", "result", "error"), describeEvents(evs))
	if writes < 10 || writes > 26 || counted > 26 {
		t.Fatalf("60 Problems gave %v API writes and %s, want 10 to 25 writes (+1 refill)", writes, describeEvents(evs))
	}
}

// TestIngressEventsOnlyFromTheLeader: of two elected watchers only the
// leader posts; the standby writes no Event.
func TestIngressEventsOnlyFromTheLeader(t *testing.T) {
	e := newEnv(t)
	class := "ours-" + e.ns
	createClass(t, e, class, e.controller())
	leader, standby := electedPair(t, e)
	runSyncer(t, e, "syncer-a")
	evs := createBadIngress(t, e, class)
	for _, ev := range evs {
		if ev.Source.Host != leader.id {
			t.Errorf("event from %s, want only the leader %s: %s", ev.Source.Host, leader.id, describeEvents([]corev1.Event{ev}))
		}
	}
	if n := standby.metric(t, "ingress_sync_watcher_kube_events_total"); n != 0 {
		t.Errorf("standby %s wrote %v Events", standby.id, n)
	}
	if n := standby.metric(t, "ingress_sync_watcher_syncer_reports_total"); n != 0 {
		t.Errorf("standby %s read %v reports", standby.id, n)
	}
}

// createBadIngress creates the Service web and the Ingress web with a
// rejected annotation, and waits for its Warning and Sync events.
func createBadIngress(t *testing.T, e *env, class string) []corev1.Event {
	t.Helper()
	e.create(t, service(e.ns, "web"))
	bad := newIngress(e.ns, "web", class, "web")
	bad.Annotations = map[string]string{badTimeout: "soon"}
	e.create(t, bad)
	return waitEvents(t, e, "web", func(evs []corev1.Event) bool {
		return len(ofReason(evs, watch.ReasonProblem)) > 0 && len(ofReason(evs, watch.ReasonSync)) > 0
	})
}

// reportScene is a watcher serving the Ingresses web and zz-barrier, and
// the stream sequence that covers them, for reports published by the test.
func reportScene(t *testing.T) (*env, *runningWatcher, uint64) {
	t.Helper()
	e := newEnv(t)
	class := "ours-" + e.ns
	createClass(t, e, class, e.controller())
	w := start(t, e.config("watcher-a"))
	e.create(t, newIngress(e.ns, "web", class, "web"))
	e.create(t, newIngress(e.ns, "zz-barrier", class, "web"))
	e.waitMessage(t, e.subject(events.KindIngress, "zz-barrier"), events.OpCreate)
	return e, w, e.lastSeq(t)
}

// barrier waits until w has read n reports, then reports a Problem of
// zz-barrier and waits for its Warning: Events are posted in the order of
// decisions, and within one in the order of Ingress names, so every Event
// the n reports called for has then been handled.
func barrier(t *testing.T, e *env, w *runningWatcher, seq uint64, n int) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d reports read", n), func() bool {
		return w.metric(t, "ingress_sync_watcher_syncer_reports_total", "result", "ok") >= float64(n)
	})
	publishReport(t, e, reportOf("syncer-barrier", seq, problem(e.ns, "zz-barrier", "Service not found")))
	waitEvents(t, e, "zz-barrier", func(evs []corev1.Event) bool { return len(ofReason(evs, watch.ReasonProblem)) == 1 })
}

// runSyncer runs a pkg/syncer on the env's stream, with a recording Applier
// in place of nginx, reporting on the status subject as cmd/syncer does.
func runSyncer(t *testing.T, e *env, pod string) {
	t.Helper()
	runSyncerWith(t, e, pod, model.Options{ControllerClass: e.controller(), IngressClass: "nginx"})
}

func runSyncerWith(t *testing.T, e *env, pod string, opts model.Options) {
	t.Helper()
	runSyncerOptions(t, e, syncer.Options{Model: opts, Pod: pod})
}

// runSyncerOptions runs a pkg/syncer with opts (its Logger and Report set
// here), as runSyncer does.
func runSyncerOptions(t *testing.T, e *env, opts syncer.Options) {
	t.Helper()
	pod := opts.Pod
	nc, js := natstest.Connect(t, e.nats.URL())
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	opts.Report = func(_ context.Context, st events.SyncerStatus) error {
		data, err := events.EncodeStatus(st)
		if err != nil {
			return err
		}
		return nc.Publish(events.StatusSubject(prefix, pod), data)
	}
	s, err := syncer.New(syncertest.New(), opts)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the stream", func() bool { return e.messages(t) != nil })
	c, err := stream.NewConsumer(js, streamName, prefix, s)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { _ = s.Start(ctx); done <- struct{}{} }()
	go func() { _ = c.Start(ctx); done <- struct{}{} }()
	t.Cleanup(func() {
		cancel()
		<-done
		<-done
	})
}

func reportOf(pod string, seq uint64, ps ...events.ReportedProblem) events.SyncerStatus {
	return events.SyncerStatus{Pod: pod, Ready: true, CaughtUp: true, Sequence: seq, Problems: len(ps), ProblemList: ps, Time: time.Now()}
}

func problem(ns, name, reason string) events.ReportedProblem {
	return events.ReportedProblem{Kind: "Ingress", Namespace: ns, Name: name, Reason: reason}
}

// publishReport publishes a syncer report as a syncer does.
func publishReport(t *testing.T, e *env, st events.SyncerStatus) {
	t.Helper()
	data, err := events.EncodeStatus(st)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	if _, err := e.js.Publish(ctx, events.StatusSubject(prefix, st.Pod), data); err != nil {
		t.Fatalf("publish report: %v", err)
	}
}

// listEvents lists the Events on Ingress name, as kubectl describe does.
func listEvents(t *testing.T, e *env, name string) []corev1.Event {
	t.Helper()
	return listEventsOn(t, e, "Ingress", name)
}

func listEventsOn(t *testing.T, e *env, kind, name string) []corev1.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	sel := fields.Set{"involvedObject.kind": kind, "involvedObject.name": name}.AsSelector().String()
	list, err := e.client.CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		t.Fatalf("list events: %v", err)
	}
	return list.Items
}

func waitEvents(t *testing.T, e *env, name string, cond func([]corev1.Event) bool) []corev1.Event {
	t.Helper()
	var evs []corev1.Event
	eventually(t, "events on Ingress "+name, func() bool {
		evs = listEvents(t, e, name)
		return cond(evs)
	})
	return evs
}

func ofReason(evs []corev1.Event, reason string) []corev1.Event {
	var out []corev1.Event
	for _, ev := range evs {
		if ev.Reason == reason {
			out = append(out, ev)
		}
	}
	return out
}

func describeEvents(evs []corev1.Event) string {
	var lines []string
	for _, ev := range evs {
		lines = append(lines, fmt.Sprintf("%s %s x%d from %s/%s: %s", ev.Type, ev.Reason, ev.Count, ev.Source.Component, ev.Source.Host, ev.Message))
	}
	return fmt.Sprintf("%d events [%s]", len(evs), strings.Join(lines, "; "))
}

func getIngress(t *testing.T, e *env, name string) *networkingv1.Ingress {
	t.Helper()
	ing, err := e.client.NetworkingV1().Ingresses(e.ns).Get(t.Context(), name, getOpts)
	if err != nil {
		t.Fatal(err)
	}
	return ing
}

func updateIngress(t *testing.T, e *env, ing *networkingv1.Ingress) {
	t.Helper()
	if _, err := e.client.NetworkingV1().Ingresses(e.ns).Update(t.Context(), ing, updateOpts); err != nil {
		t.Fatal(err)
	}
}

// describeForDocs logs `kubectl describe ingress` and the Warnings of the
// namespace when WATCH_TEST_DESCRIBE is set (the output shown in
// docs/debugging.md).
func describeForDocs(t *testing.T, e *env, name string) {
	t.Helper()
	if os.Getenv("WATCH_TEST_DESCRIBE") == "" {
		return
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := controlPlane.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"describe", "ingress", name}, {"get", "events", "--field-selector", "type=Warning"}} {
		ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
		out, err := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", kubeconfig, "-n", e.ns}, args...)...).CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, out)
		}
		t.Logf("kubectl %s:\n%s", strings.Join(args, " "), out)
	}
}
