package harness

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// chain is the nat chain of the harness's DNAT rules, jumped to from OUTPUT.
const chain = "HARNESS-SERVICES"

// syncLoadBalancers gives every Service of type LoadBalancer an address
// of LoadBalancerRange in status.loadBalancer.ingress, as a cloud would.
func (c *Cluster) syncLoadBalancers(ctx context.Context) error {
	svcs, err := c.kube.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	live := map[string]bool{}
	var errs []error
	for i := range svcs.Items {
		svc := &svcs.Items[i]
		if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
			continue
		}
		key := svc.Namespace + "/" + svc.Name + "/" + string(svc.UID)
		live[key] = true
		ip, err := c.lbs.get(key)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		want := []corev1.LoadBalancerIngress{{IP: ip.String(), IPMode: new(corev1.LoadBalancerIPModeVIP)}}
		if len(svc.Status.LoadBalancer.Ingress) == 1 && svc.Status.LoadBalancer.Ingress[0].IP == ip.String() {
			continue
		}
		svc = svc.DeepCopy()
		svc.Status.LoadBalancer.Ingress = want
		_, err = c.kube.CoreV1().Services(svc.Namespace).UpdateStatus(ctx, svc, metav1.UpdateOptions{})
		if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	c.lbs.keep(live)
	return errors.Join(errs...)
}

// syncProxy is kube-proxy: the harness's nat chain DNATs every TCP or UDP
// port of every Service, on its ClusterIP and LoadBalancer addresses, to
// the ready endpoints of its EndpointSlices, spread at random. The rules
// are replaced (iptables-restore) only when they change.
func (c *Cluster) syncProxy(ctx context.Context) error {
	svcs, err := c.kube.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	all, err := c.kube.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	bySvc := map[string][]discoveryv1.EndpointSlice{}
	for _, s := range all.Items {
		key := s.Namespace + "/" + s.Labels[discoveryv1.LabelServiceName]
		bySvc[key] = append(bySvc[key], s)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "*nat\n:%s - [0:0]\n", chain)
	for i := range svcs.Items {
		svc := &svcs.Items[i]
		writeServiceRules(&b, svc, bySvc[svc.Namespace+"/"+svc.Name])
	}
	b.WriteString("COMMIT\n")
	if b.String() == c.rules {
		return nil
	}
	cmd := exec.CommandContext(ctx, "iptables-restore", "--noflush")
	cmd.Stdin = strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("harness: iptables-restore: %w: %s", err, out)
	}
	c.rules = b.String()
	return nil
}

// writeServiceRules writes the DNAT rules of one Service.
func writeServiceRules(b *strings.Builder, svc *corev1.Service, ss []discoveryv1.EndpointSlice) {
	var vips []string
	if ip := svc.Spec.ClusterIP; ip != "" && ip != corev1.ClusterIPNone {
		vips = append(vips, ip)
	}
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if in.IP != "" {
			vips = append(vips, in.IP)
		}
	}
	for _, sp := range svc.Spec.Ports {
		eps := endpointsOf(ss, sp)
		proto := strings.ToLower(string(sp.Protocol))
		if len(eps) == 0 || (proto != "tcp" && proto != "udp") {
			continue
		}
		for _, vip := range vips {
			for i, ep := range eps {
				fmt.Fprintf(b, "-A %s -d %s/32 -p %s --dport %d", chain, vip, proto, sp.Port)
				if n := len(eps) - i; n > 1 {
					fmt.Fprintf(b, " -m statistic --mode random --probability %.5f", 1/float64(n))
				}
				fmt.Fprintf(b, " -j DNAT --to-destination %s\n", ep)
			}
		}
	}
}

// endpointsOf is address:port of every ready endpoint of a Service port
// (matched by name, as kube-proxy does), sorted.
func endpointsOf(ss []discoveryv1.EndpointSlice, sp corev1.ServicePort) []string {
	var out []string
	for _, s := range ss {
		for _, p := range s.Ports {
			if p.Port == nil || p.Name == nil || *p.Name != sp.Name {
				continue
			}
			for _, ep := range s.Endpoints {
				if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
					continue
				}
				for _, a := range ep.Addresses {
					out = append(out, fmt.Sprintf("%s:%d", a, *p.Port))
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
