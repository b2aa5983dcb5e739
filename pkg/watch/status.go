package watch

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// statusWriter keeps status.loadBalancer.ingress of the Ingresses we serve
// equal to our addresses, once the syncers serve them (statusgate.go), and
// clears it on Ingresses that left our class.
type statusWriter struct {
	w     *Watcher
	t     *term                                        // its publishes and the syncers' reports (t.events)
	queue workqueue.TypedRateLimitingInterface[string] // Ingress cache keys

	mu      sync.Mutex
	written map[string]bool       // Ingresses this term wrote addresses to
	waiting map[string]statusWait // Ingresses whose address waits for the syncers
}

func newStatusWriter(w *Watcher, t *term) *statusWriter {
	return &statusWriter{
		w:       w,
		t:       t,
		queue:   newQueue[string](),
		written: make(map[string]bool),
		waiting: make(map[string]statusWait),
	}
}

func (s *statusWriter) enqueue(cacheKey string) { s.queue.Add(cacheKey) }

// enqueueAll queues every Ingress, after a change of the addresses or of an
// IngressClass.
func (s *statusWriter) enqueueAll() {
	for _, obj := range s.w.informers.sources[events.KindIngress].list() {
		if k, err := keyOf(events.KindIngress, obj); err == nil {
			s.queue.Add(k.cacheKey())
		}
	}
}

// run writes status until ctx ends (one worker: writes are few).
func (s *statusWriter) run(ctx context.Context) {
	s.enqueueAll()
	go func() {
		<-ctx.Done()
		s.queue.ShutDown()
	}()
	defer s.w.metrics.statusWaiting.Set(0)
	for {
		k, shutdown := s.queue.Get()
		if shutdown {
			return
		}
		if err := s.sync(ctx, k); err != nil && ctx.Err() == nil {
			s.w.log.Warn("ingress status update failed, will retry", "ingress", k, "error", err)
			s.queue.AddRateLimited(k)
		} else {
			s.queue.Forget(k)
		}
		s.queue.Done(k)
	}
}

// sync brings the status of one Ingress to what it should be.
func (s *statusWriter) sync(ctx context.Context, cacheKey string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(cacheKey)
	if err != nil {
		return nil
	}
	obj, ok := s.w.informers.sources[events.KindIngress].get(key{Kind: events.KindIngress, Namespace: ns, Name: name})
	if !ok {
		s.settled(cacheKey)
		return nil
	}
	ing := obj.(*networkingv1.Ingress)
	want := s.addresses()
	served := s.w.serves(ing)
	have := ing.Status.LoadBalancer.Ingress
	s.mu.Lock()
	ours := s.written[cacheKey] || (len(have) > 0 && slices.EqualFunc(have, want, sameAddress))
	s.mu.Unlock()
	if !served {
		s.settled(cacheKey)
		if !ours || len(have) == 0 {
			return nil
		}
		want = nil
	}
	if slices.EqualFunc(have, want, sameAddress) {
		s.settled(cacheKey)
		return nil
	}
	var warning string
	if served {
		if ok, warning = s.confirmed(cacheKey, ing); !ok {
			return nil
		}
	}
	if err := s.write(ctx, ing, want); err != nil {
		return err
	}
	s.mu.Lock()
	s.written[cacheKey] = served
	s.mu.Unlock()
	s.settled(cacheKey)
	if warning != "" {
		s.w.log.Warn("ingress status address written without the syncers", "namespace", ing.Namespace, "name", ing.Name, "why", warning)
		if s.t.events != nil {
			s.t.events.notify(notice{Object: ingressKey(ing.Namespace, ing.Name), Warning: true, Reason: ReasonAddressUnconfirmed, Message: warning})
		}
	}
	s.w.log.Info("ingress status updated", "namespace", ing.Namespace, "name", ing.Name, "served", served, "addresses", addressList(want))
	return nil
}

// write sets the status addresses of ing to want.
func (s *statusWriter) write(ctx context.Context, ing *networkingv1.Ingress, want []networkingv1.IngressLoadBalancerIngress) error {
	update := ing.DeepCopy()
	update.Status.LoadBalancer.Ingress = want
	callCtx, cancel := context.WithTimeout(ctx, natsTimeout)
	defer cancel()
	if _, err := s.w.cfg.Client.NetworkingV1().Ingresses(ing.Namespace).UpdateStatus(callCtx, update, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update status: %w", err)
	}
	return nil
}

// addresses are the load-balancer addresses to publish, sorted: from
// --publish-status-address, or from --publish-service (its load-balancer
// ingress, else its external IPs, else its cluster IP).
func (s *statusWriter) addresses() []networkingv1.IngressLoadBalancerIngress {
	var out []networkingv1.IngressLoadBalancerIngress
	if len(s.w.cfg.PublishStatusAddress) > 0 {
		for _, a := range s.w.cfg.PublishStatusAddress {
			out = append(out, addressOf(a))
		}
	} else if svc := s.publishService(); svc != nil {
		out = serviceAddresses(svc)
	}
	slices.SortFunc(out, func(a, b networkingv1.IngressLoadBalancerIngress) int {
		return strings.Compare(a.IP+"/"+a.Hostname, b.IP+"/"+b.Hostname)
	})
	return slices.CompactFunc(out, sameAddress)
}

func (s *statusWriter) publishService() *corev1.Service {
	inf := s.w.informers.publishService
	if inf == nil {
		return nil
	}
	items := inf.GetStore().List()
	if len(items) == 0 {
		return nil
	}
	svc, _ := items[0].(*corev1.Service)
	return svc
}

func serviceAddresses(svc *corev1.Service) []networkingv1.IngressLoadBalancerIngress {
	var out []networkingv1.IngressLoadBalancerIngress
	for _, lb := range svc.Status.LoadBalancer.Ingress {
		out = append(out, networkingv1.IngressLoadBalancerIngress{IP: lb.IP, Hostname: lb.Hostname})
	}
	if len(out) > 0 {
		return out
	}
	for _, ip := range svc.Spec.ExternalIPs {
		out = append(out, networkingv1.IngressLoadBalancerIngress{IP: ip})
	}
	if len(out) == 0 && svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone {
		out = append(out, networkingv1.IngressLoadBalancerIngress{IP: svc.Spec.ClusterIP})
	}
	return out
}

// addressOf is an IP entry for an IP, else a hostname entry.
func addressOf(a string) networkingv1.IngressLoadBalancerIngress {
	if net.ParseIP(a) != nil {
		return networkingv1.IngressLoadBalancerIngress{IP: a}
	}
	return networkingv1.IngressLoadBalancerIngress{Hostname: a}
}

func sameAddress(a, b networkingv1.IngressLoadBalancerIngress) bool {
	return a.IP == b.IP && a.Hostname == b.Hostname
}

func addressList(as []networkingv1.IngressLoadBalancerIngress) string {
	parts := make([]string, 0, len(as))
	for _, a := range as {
		parts = append(parts, a.IP+a.Hostname)
	}
	return strings.Join(parts, ",")
}
