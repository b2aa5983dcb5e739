// Command replaydemo starts an embedded nats-server with JetStream, creates the
// INGRESS stream and publishes a short, realistic story through the events
// Publisher (what the watcher does), then keeps serving until interrupted.
// docs/debugging.md shows the real output of `nats stream view`,
// `syncer decode`, `syncer replay`, `syncer backends` and `syncer routes`
// against it:
//
//	go run ./hack/replaydemo --store /tmp/demo-nats --port 4333
//
// Its objects come from the test harness (test/testkit/fixtures), so it
// lives in hack/, above the harness, with the other programs that are not
// shipped.
package main

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/pkg/stream/embedded"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

func main() {
	store := flag.String("store", "", "JetStream store directory (required)")
	port := flag.Int("port", 4333, "client port on 127.0.0.1")
	gap := flag.Duration("gap", 2*time.Second, "time between the events of the story")
	history := flag.Int64("history", 0, "messages kept per subject (0: the default, 16)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *store, *port, *gap, *history); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, store string, port int, gap time.Duration, history int64) error {
	srv, err := embedded.Start(ctx, embedded.Options{StoreDir: store, Port: port})
	if err != nil {
		return err
	}
	defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
	conn, err := stream.Connect(ctx, srv.ClientURL(), stream.WithName("demo"), stream.WithConnectOnce(),
		stream.WithConnectLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return err
	}
	defer conn.Close()
	js := conn.JetStream()
	if _, err := stream.Ensure(ctx, js, stream.Config{Name: events.DefaultStream, SubjectPrefix: events.DefaultSubjectPrefix, History: history}); err != nil {
		return err
	}
	pub, err := stream.NewPublisher(js, events.DefaultSubjectPrefix)
	if err != nil {
		return err
	}
	if err := publishStory(ctx, pub, gap); err != nil {
		return err
	}
	if err := pub.Close(ctx); err != nil {
		return err
	}
	fmt.Println("ready:", srv.ClientURL())
	<-ctx.Done()
	return nil
}

// publishStory: the shop app appears, scales, gets an /api path, loses its
// api endpoints (a 503), gets TLS; an unrelated Service is created; the
// controller ConfigMap (--configmap kube-system/ingress-sync) raises the
// global proxy-body-size, the one change that reloads nginx.
func publishStory(ctx context.Context, pub *stream.Publisher, gap time.Duration) error {
	pair, err := certs.Generate(certs.Options{Hosts: []string{"shop.example.com"}})
	if err != nil {
		return err
	}
	web := fixtures.Rule("shop.example.com", fixtures.Prefix("/", "web", 80))
	api := fixtures.Rule("shop.example.com", fixtures.Prefix("/api", "api", 80))
	story := []struct {
		op  events.Op
		obj runtime.Object
	}{
		{events.OpCreate, fixtures.IngressClass(ingress.DefaultIngressClass, ingress.DefaultControllerClass, false)},
		{events.OpCreate, fixtures.Service("shop", "web", 80)},
		{events.OpCreate, fixtures.EndpointSlice("shop", "web-7xk2p", "web", 8080, "10.244.1.12", "10.244.2.7")},
		{events.OpCreate, fixtures.Ingress("shop", "web", web)},
		{events.OpCreate, fixtures.Service("shop", "api", 80)},
		{events.OpCreate, fixtures.EndpointSlice("shop", "api-m4q9z", "api", 9090, "10.244.1.30")},
		{events.OpUpdate, fixtures.EndpointSlice("shop", "web-7xk2p", "web", 8080, "10.244.1.12", "10.244.2.7", "10.244.3.4")},
		{events.OpUpdate, fixtures.Ingress("shop", "web", web, api)},
		{events.OpCreate, fixtures.Service("monitoring", "grafana", 3000)},
		{events.OpUpdate, fixtures.EndpointSlice("shop", "api-m4q9z", "api", 9090)},
		{events.OpCreate, fixtures.TLSSecret("shop", "shop-tls", pair)},
		{events.OpUpdate, fixtures.Ingress("shop", "web", web, api, fixtures.TLS("shop-tls", "shop.example.com"))},
		{events.OpUpdate, fixtures.EndpointSlice("shop", "api-m4q9z", "api", 9090, "10.244.2.31")},
		{events.OpCreate, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "ingress-sync"},
			Data: map[string]string{"proxy-body-size": "8m"}}},
	}
	for i, s := range story {
		if i > 0 {
			time.Sleep(gap)
		}
		m := s.obj.(metav1.Object)
		m.SetResourceVersion(fmt.Sprint(1000 + i))
		ev := events.Event{Op: s.op, Kind: events.KindOf(s.obj), Namespace: m.GetNamespace(), Name: m.GetName(),
			UID: string(m.GetUID()), ResourceVersion: m.GetResourceVersion(), ObservedAt: time.Now().UTC(),
			WatcherID: "watcher-5d9c7-abcde", Object: s.obj}
		if err := pub.Publish(ctx, ev); err != nil {
			return err
		}
		if err := pub.Flush(ctx); err != nil {
			return err
		}
	}
	return nil
}
