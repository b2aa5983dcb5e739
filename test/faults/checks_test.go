package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/nginx"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
	"github.com/ingress-sync/ingress-sync/test/testkit/world"
)

// checkAll runs the final checks, each polled until it passes, bounded.
func (s *suite) checkAll(ctx context.Context) {
	checks := []condition{
		{"the stream holds the API's state", s.streamMatchesAPI},
		{"every syncer applied the checksum syncer replay rebuilds at the last sequence", s.checksumsMatchReplay},
		{"every host answers from a ready endpoint of its Service, deleted hosts 404", s.hostsServed},
		{"syncer backends matches the API's ready endpoints", s.backendsMatch},
		{"no process that was not killed died", func(context.Context) error { return s.alive() }},
	}
	for _, c := range checks {
		cctx, cancel := context.WithTimeout(ctx, checkTimeout)
		err := s.eventually(cctx, c.what, c.ok)
		cancel()
		if err != nil {
			s.t.Errorf("check: %v", err)
		} else {
			s.t.Logf("check passed: %s", c.what)
		}
	}
}

// apiState is what the API holds in the churn's namespaces.
type apiState struct {
	ingresses []networkingv1.Ingress
	services  []corev1.Service
	slices    []discoveryv1.EndpointSlice
}

func (s *suite) readAPI(ctx context.Context) (apiState, error) {
	var a apiState
	for _, ns := range churnNamespaces(s.spec) {
		ings, err1 := s.w.Kube.NetworkingV1().Ingresses(ns).List(ctx, metav1.ListOptions{})
		svcs, err2 := s.w.Kube.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
		sls, err3 := s.w.Kube.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{})
		if err := errors.Join(err1, err2, err3); err != nil {
			return a, err
		}
		a.ingresses = append(a.ingresses, ings.Items...)
		a.services = append(a.services, svcs.Items...)
		a.slices = append(a.slices, sls.Items...)
	}
	return a, nil
}

// ready is the ready endpoint addresses of a Service, sorted.
func (a apiState) ready(ns, svc string) []string {
	var out []string
	for _, sl := range a.slices {
		if sl.Namespace != ns || sl.Labels[discoveryv1.LabelServiceName] != svc {
			continue
		}
		for _, ep := range sl.Endpoints {
			if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
				out = append(out, ep.Addresses...)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// rootService is the Service of an Ingress's path "/" and its host.
func rootService(ing *networkingv1.Ingress) (host, svc string) {
	for _, r := range ing.Spec.Rules {
		if r.HTTP == nil {
			continue
		}
		for _, p := range r.HTTP.Paths {
			if p.Path == "/" && p.Backend.Service != nil {
				return r.Host, p.Backend.Service.Name
			}
		}
	}
	return "", ""
}

// streamMatchesAPI: the last message of every object's subject carries
// the API's object (what the watcher publishes of it), and every subject
// of an object the API no longer has ends with a delete. The API is read
// before and after the stream: an object the churn changed in between is
// left out (the stream may hold either version), so that the check
// converges under churn too.
func (s *suite) streamMatchesAPI(ctx context.Context) error {
	before, err := s.readAPI(ctx)
	if err != nil {
		return err
	}
	heads, err := s.lastPerSubject(ctx)
	if err != nil {
		return err
	}
	st, err := s.stream(ctx)
	if err != nil {
		return err
	}
	after, err := s.readAPI(ctx)
	if err != nil {
		return err
	}
	want, then := before.bySubject(), after.bySubject()
	for _, subject := range slices.Sorted(maps.Keys(want)) {
		if rv(then[subject]) != rv(want[subject]) {
			continue // changed while the stream was read
		}
		if err := s.headMatches(ctx, st, heads, subject, want[subject]); err != nil {
			return err
		}
	}
	namespaces := churnNamespaces(s.spec)
	for subject, h := range heads {
		scoped := slices.Contains(namespaces, h.Namespace) &&
			slices.Contains([]events.Kind{events.KindIngress, events.KindService, events.KindEndpointSlice}, h.Kind)
		if scoped && want[subject] == nil && then[subject] == nil && h.Op != events.OpDelete {
			return fmt.Errorf("%s: the API has no such object, the stream's last message is a %s", subject, h.Op)
		}
	}
	return nil
}

// headsTimeout bounds one read of the stream's last messages: such a read
// (an ordered consumer) has been seen to stall after a NATS node was
// SIGKILLed; the next poll reads again with a new consumer.
const headsTimeout = 15 * time.Second

func (s *suite) lastPerSubject(ctx context.Context) (map[string]stream.Head, error) {
	ctx, cancel := context.WithTimeout(ctx, headsTimeout)
	defer cancel()
	return stream.LastPerSubject(ctx, s.js, world.Stream, world.Prefix)
}

// bySubject maps the stream subject of every object to the object.
func (a apiState) bySubject() map[string]metav1.Object {
	out := map[string]metav1.Object{}
	for i := range a.ingresses {
		out[events.Subject(world.Prefix, events.KindIngress, a.ingresses[i].Namespace, a.ingresses[i].Name)] = &a.ingresses[i]
	}
	for i := range a.services {
		out[events.Subject(world.Prefix, events.KindService, a.services[i].Namespace, a.services[i].Name)] = &a.services[i]
	}
	for i := range a.slices {
		out[events.Subject(world.Prefix, events.KindEndpointSlice, a.slices[i].Namespace, a.slices[i].Name)] = &a.slices[i]
	}
	return out
}

// rv is the object's resourceVersion, "" for none.
func rv(o metav1.Object) string {
	if o == nil {
		return ""
	}
	return o.GetResourceVersion()
}

func (s *suite) headMatches(ctx context.Context, st jetstream.Stream, heads map[string]stream.Head, subject string, obj metav1.Object) error {
	h, ok := heads[subject]
	if !ok || h.Op == events.OpDelete {
		return fmt.Errorf("%s: in the API, not in the stream (head %+v)", subject, h)
	}
	m, err := st.GetLastMsgForSubject(ctx, subject)
	if err != nil {
		return fmt.Errorf("%s: %w", subject, err)
	}
	ev, err := events.Decode(m.Data)
	if err != nil {
		return fmt.Errorf("%s: %w", subject, err)
	}
	switch o := obj.(type) {
	case *networkingv1.Ingress:
		got, _ := ev.Object.(*networkingv1.Ingress)
		if got == nil || got.UID != o.UID || !equality.Semantic.DeepEqual(got.Spec, o.Spec) {
			return fmt.Errorf("%s: the stream's Ingress differs from the API's", subject)
		}
	case *discoveryv1.EndpointSlice:
		got, _ := ev.Object.(*discoveryv1.EndpointSlice)
		if got == nil || got.UID != o.UID || !equality.Semantic.DeepEqual(got.Endpoints, o.Endpoints) {
			return fmt.Errorf("%s: the stream's EndpointSlice differs from the API's", subject)
		}
	case *corev1.Service:
		if h.UID != string(o.UID) {
			return fmt.Errorf("%s: uid %s in the stream, %s in the API", subject, h.UID, o.UID)
		}
	}
	return nil
}

// checksumsMatchReplay: every syncer reports the last sequence of the
// stream, with the checksum `syncer replay` rebuilds there.
func (s *suite) checksumsMatchReplay(ctx context.Context) error {
	seq, err := s.lastSeq(ctx)
	if err != nil {
		return err
	}
	for _, sy := range s.w.Syncers {
		st, ok := s.w.Status(sy.Name)
		if !ok || st.Sequence != seq {
			return fmt.Errorf("%s: applied sequence %d, the stream's last is %d", sy.Name, st.Sequence, seq)
		}
		sum, err := s.replayChecksum(ctx, sy, seq)
		if err != nil {
			return err
		}
		if st.Checksum != sum {
			return fmt.Errorf("%s: checksum %s, syncer replay at %d gives %s", sy.Name, st.Checksum, seq, sum)
		}
	}
	return nil
}

// replayChecksum runs `syncer replay --at seq` with the syncer's flags.
func (s *suite) replayChecksum(ctx context.Context, sy *world.Syncer, seq uint64) (string, error) {
	args := append([]string{"replay", "--at", strconv.FormatUint(seq, 10), "--output", "json",
		"--nats-url", s.nats.URLs(), "--stream", world.Stream, "--subject-prefix", world.Prefix,
		"--controller-class", world.ControllerClass, "--ingress-class", world.IngressClass,
		"--http-port", strconv.Itoa(sy.HTTPPort), "--https-port", strconv.Itoa(sy.HTTPSPort),
		"--status-port", strconv.Itoa(sy.StatusPort)}, s.syncerNATSArgs()...)
	out, err := s.syncerCommand(ctx, args...)
	if err != nil {
		return "", err
	}
	var snap struct {
		Configuration struct {
			Checksum string `json:"checksum"`
		} `json:"configuration"`
	}
	if err := json.Unmarshal(out, &snap); err != nil || snap.Configuration.Checksum == "" {
		return "", fmt.Errorf("syncer replay output (%v): %.500s", err, out)
	}
	return snap.Configuration.Checksum, nil
}

// syncerCommand runs the syncer binary and returns its standard output.
func (s *suite) syncerCommand(ctx context.Context, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, "syncer"), args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("syncer %s: %w: %s", args[0], err, stderr.Bytes())
	}
	return out, nil
}

// hostsServed: through every nginx, every Ingress's host answers from a
// ready endpoint of the Service of its path "/", and every deleted host
// answers 404.
func (s *suite) hostsServed(ctx context.Context) error {
	a, err := s.readAPI(ctx)
	if err != nil {
		return err
	}
	_, deleted := s.churn.result()
	maps.Copy(deleted, s.deleted)
	for i := range a.ingresses {
		host, svc := rootService(&a.ingresses[i])
		delete(deleted, host)
		ready := a.ready(a.ingresses[i].Namespace, svc)
		for _, sy := range s.w.Syncers {
			if err := answersFrom(ctx, sy, host, ready); err != nil {
				return err
			}
		}
	}
	for _, host := range slices.Sorted(maps.Keys(deleted)) {
		if err := s.hostAnswers(ctx, host, http.StatusNotFound); err != nil {
			return err
		}
	}
	return nil
}

// answersFrom: the nginx answers host from one of the ready addresses.
func answersFrom(ctx context.Context, sy *world.Syncer, host string, ready []string) error {
	client := sy.Client(nil)
	client.Timeout = probeTimeout
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", sy.Name, host, err)
	}
	defer resp.Body.Close()
	var r echo.Reply
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: status %d (%v)", sy.Name, host, resp.StatusCode, err)
	}
	if !slices.Contains(ready, r.Backend) {
		return fmt.Errorf("%s: %s answered from %s, not a ready endpoint of its Service %v", sy.Name, host, r.Backend, ready)
	}
	return nil
}

// backendsMatch: `syncer backends` of every nginx holds, for every
// Service of the churn an Ingress routes to, exactly its ready endpoints.
func (s *suite) backendsMatch(ctx context.Context) error {
	a, err := s.readAPI(ctx)
	if err != nil {
		return err
	}
	routed := map[[2]string]bool{}
	for i := range a.ingresses {
		_, svc := rootService(&a.ingresses[i])
		routed[[2]string{a.ingresses[i].Namespace, svc}] = true
	}
	for _, sy := range s.w.Syncers {
		out, err := s.syncerCommand(ctx, "backends", "--status-port", strconv.Itoa(sy.StatusPort), "--json")
		if err != nil {
			return err
		}
		var b nginx.Backends
		if err := json.Unmarshal(out, &b); err != nil {
			return fmt.Errorf("%s: syncer backends: %w", sy.Name, err)
		}
		seen := map[[2]string]bool{}
		for _, be := range b.Backends {
			key := [2]string{be.Namespace, be.Service}
			if !routed[key] {
				continue
			}
			seen[key] = true
			var got []string
			for _, ep := range be.Endpoints {
				got = append(got, ep.Address)
			}
			slices.Sort(got)
			if want := a.ready(be.Namespace, be.Service); !slices.Equal(got, want) {
				return fmt.Errorf("%s: backend %s has %v, the API's ready endpoints are %v", sy.Name, be.Name, got, want)
			}
		}
		if len(seen) != len(routed) {
			return fmt.Errorf("%s: backends for %d of the %d routed Services", sy.Name, len(seen), len(routed))
		}
	}
	return nil
}
