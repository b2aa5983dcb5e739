package migrate

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/test/testkit/golden"
	"github.com/ingress-sync/ingress-sync/test/testkit/natstest"
)

const (
	testStream  = "INGRESS"
	testPrefix  = "ingress"
	testTimeout = 20 * time.Second
)

// publishAll publishes a create event of every object, then a delete of
// the objects in deleted, as the watcher would.
func publishAll(t *testing.T, js jetstream.JetStream, objs []runtime.Object, deleted ...runtime.Object) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	p, err := stream.NewPublisher(js, testPrefix)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	event := func(op events.Op, obj runtime.Object, i int) events.Event {
		obj = obj.DeepCopyObject()
		m := obj.(metav1.Object)
		m.SetResourceVersion(strconv.Itoa(i + 1))
		m.SetUID(types.UID("uid-" + m.GetNamespace() + "-" + m.GetName()))
		return events.Event{Op: op, Kind: events.KindOf(obj), Namespace: m.GetNamespace(), Name: m.GetName(),
			UID: string(m.GetUID()), ResourceVersion: m.GetResourceVersion(), ObservedAt: time.Unix(int64(i), 0),
			WatcherID: "watcher-test", Object: obj}
	}
	for i, obj := range objs {
		if err := p.Publish(ctx, event(events.OpCreate, obj, i)); err != nil {
			t.Fatalf("publish: %v", err)
		}
	}
	for i, obj := range deleted {
		if err := p.Publish(ctx, event(events.OpDelete, obj, len(objs)+i)); err != nil {
			t.Fatalf("publish: %v", err)
		}
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
}

func newStream(t *testing.T) jetstream.JetStream {
	t.Helper()
	_, url := natstest.Start(t)
	_, js := natstest.Connect(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := stream.Ensure(ctx, js, stream.Config{Name: testStream, SubjectPrefix: testPrefix}); err != nil {
		t.Fatalf("EnsureStream: %v", err)
	}
	return js
}

// TestStream checks the corpus published on the event stream: the same
// findings as from the directory, and Build's own view of the Services
// (the one the directory lacks is not found). A deleted object is not
// read.
func TestStream(t *testing.T) {
	js := newStream(t)
	in, err := ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	var gone runtime.Object
	for _, obj := range in.Objects {
		if m := obj.(metav1.Object); m.GetName() == "other-controller" {
			gone = obj
		}
	}
	publishAll(t, js, in.Objects, gone)
	got, err := ReadStream(t.Context(), js, StreamOptions{Stream: testStream, SubjectPrefix: testPrefix, Timeout: testTimeout})
	if err != nil {
		t.Fatalf("ReadStream: %v", err)
	}
	if len(got.Objects) != len(in.Objects)-1 {
		t.Errorf("read %d objects, want %d", len(got.Objects), len(in.Objects)-1)
	}
	checkLikeDir(t, "stream", got, in)
}

// checkLikeDir checks got, read back from somewhere, against the golden
// report name and against the findings of the directory it came from.
func checkLikeDir(t *testing.T, name string, got, dir *Input) {
	t.Helper()
	o := Options{IngressClass: "nginx", ConfigMap: DefaultConfigMap, NewBuilder: testBuilder}
	r, err := Check(got, o)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, name, text.Bytes(), registryHint)
	want, err := Check(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != len(want.Findings) {
		t.Fatalf("%d findings, want %d", len(r.Findings), len(want.Findings))
	}
	for i := range r.Findings {
		if r.Findings[i] != want.Findings[i] {
			t.Errorf("finding %d: %+v, want %+v", i, r.Findings[i], want.Findings[i])
		}
	}
}

func TestStreamErrors(t *testing.T) {
	js := newStream(t)
	tests := map[string]StreamOptions{
		"no such stream": {Stream: "NOPE", SubjectPrefix: testPrefix, Timeout: testTimeout},
		"no timeout":     {Stream: testStream, SubjectPrefix: testPrefix},
		"bad prefix":     {Stream: testStream, SubjectPrefix: "a b", Timeout: testTimeout},
	}
	for name, o := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := ReadStream(t.Context(), js, o); !errors.Is(err, ErrInput) {
				t.Errorf("ReadStream = %v, want ErrInput", err)
			}
		})
	}
}

// TestStreamSkipsUndecodable: a message that cannot be decoded is a note,
// the rest is read.
func TestStreamSkipsUndecodable(t *testing.T) {
	js := newStream(t)
	in, err := ReadDir("testdata/clean")
	if err != nil {
		t.Fatal(err)
	}
	publishAll(t, js, in.Objects)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := js.Publish(ctx, events.Subject(testPrefix, events.KindService, "shop", "broken"), []byte("not msgpack")); err != nil {
		t.Fatal(err)
	}
	got, err := ReadStream(t.Context(), js, StreamOptions{Stream: testStream, SubjectPrefix: testPrefix, Timeout: testTimeout})
	if err != nil {
		t.Fatalf("ReadStream: %v", err)
	}
	if len(got.Objects) != len(in.Objects) || len(got.Notes) != 1 {
		t.Errorf("read %d objects (want %d), notes %q (want one)", len(got.Objects), len(in.Objects), got.Notes)
	}
}

// TestStreamEmpty: an empty stream is read at once.
func TestStreamEmpty(t *testing.T) {
	js := newStream(t)
	in, err := ReadStream(t.Context(), js, StreamOptions{Stream: testStream, SubjectPrefix: testPrefix, Timeout: testTimeout})
	if err != nil {
		t.Fatalf("ReadStream: %v", err)
	}
	if len(in.Objects) != 0 {
		t.Errorf("read %d objects from an empty stream", len(in.Objects))
	}
}
