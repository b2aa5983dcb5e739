package harness

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The node every Pod runs on: its name, and its address (the API server's
// advertised address).
const (
	nodeName = "harness"
	hostIP   = "198.18.0.254"
)

// syncPods is the scheduler and the kubelet: every Pod is bound to the
// node, gets an IP and becomes Running and Ready; Pods of the echo-basic
// image are answered on their IP; a deleted Pod is removed at once (its
// containers stop at once). The IPs and echo servers of Pods that are gone
// are released.
func (c *Cluster) syncPods(ctx context.Context) error {
	pods, err := c.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	live := map[string]bool{}
	var errs []error
	for i := range pods.Items {
		p := &pods.Items[i]
		key := p.Namespace + "/" + p.Name
		if p.DeletionTimestamp != nil {
			errs = append(errs, c.removePod(ctx, p))
			continue
		}
		live[key] = true
		if p.Spec.NodeName == "" {
			errs = append(errs, c.bind(ctx, p))
			continue // the next round sees it bound
		}
		ip, err := c.podIP(key, p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, c.startEcho(ctx, key, p, ip), c.writePodStatus(ctx, p, ip))
	}
	c.pods.keep(live)
	for key, e := range c.echoes {
		if !live[key] {
			e.close()
			delete(c.echoes, key)
			c.book.forget(key)
		}
	}
	return errors.Join(errs...)
}

// ensureNode registers the node the Pods are bound to, Ready, once.
func (c *Cluster) ensureNode(ctx context.Context) error {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}}
	n, err := c.kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return err
	}
	n.Status = corev1.NodeStatus{
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "HarnessReady",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: hostIP}, {Type: corev1.NodeHostName, Address: nodeName}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: kubeletPort}},
	}
	_, err = c.kube.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	return err
}

// bind schedules the Pod on the node, as the scheduler does.
func (c *Cluster) bind(ctx context.Context, p *corev1.Pod) error {
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID},
		Target: corev1.ObjectReference{Kind: "Node", Name: nodeName}}
	err := c.kube.CoreV1().Pods(p.Namespace).Bind(ctx, b, metav1.CreateOptions{})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// removePod ends a deleted Pod's grace period, as the kubelet does once
// its containers have stopped.
func (c *Cluster) removePod(ctx context.Context, p *corev1.Pod) error {
	err := c.kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
		GracePeriodSeconds: new(int64(0)), Preconditions: &metav1.Preconditions{UID: &p.UID}})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// podIP is the Pod's IP: its IPAnnotation, or one of PodRange.
func (c *Cluster) podIP(key string, p *corev1.Pod) (netip.Addr, error) {
	if s, ok := p.Annotations[IPAnnotation]; ok {
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Addr{}, fmt.Errorf("pod %s: annotation %s: %w", key, IPAnnotation, err)
		}
		c.pods.hold(key, ip)
		return ip, nil
	}
	return c.pods.get(key)
}

// writePodStatus makes the Pod Running and Ready at ip, once.
func (c *Cluster) writePodStatus(ctx context.Context, p *corev1.Pod, ip netip.Addr) error {
	if podReady(p) && p.Status.PodIP == ip.String() {
		return nil
	}
	p = p.DeepCopy()
	now := metav1.Now()
	p.Status = corev1.PodStatus{
		Phase: corev1.PodRunning, HostIP: hostIP, HostIPs: []corev1.HostIP{{IP: hostIP}},
		PodIP: ip.String(), PodIPs: []corev1.PodIP{{IP: ip.String()}}, StartTime: &now,
	}
	for _, t := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	for _, ct := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: ct.Name, Image: ct.Image, ImageID: ct.Image, Ready: true, Started: new(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}})
	}
	_, err := c.kube.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// startEcho answers an echo-basic Pod (HTTP or gRPC mode) on ip, once; in
// HTTP mode over HTTPS too when it is given a certificate
// (echoCertificate).
func (c *Cluster) startEcho(ctx context.Context, key string, p *corev1.Pod, ip netip.Addr) error {
	if _, ok := c.echoes[key]; ok {
		return nil
	}
	info, ok := echoContext(p)
	if !ok {
		return nil
	}
	var e *echoPod
	var err error
	if info.grpc {
		e, err = startGRPCEchoPod(ip, info)
	} else {
		var cert *tls.Certificate
		if cert, err = c.echoCertificate(ctx, p); err != nil {
			return fmt.Errorf("pod %s: %w", key, err) // the next round tries again
		}
		e, err = startEchoPod(ip, info, c.book.of(key), cert)
	}
	if err != nil {
		return fmt.Errorf("pod %s: %w", key, err)
	}
	c.echoes[key] = e
	return nil
}

// echoContext reads what echo-basic reads from its environment, for a Pod
// whose container runs echo-basic as an HTTP or a gRPC server.
func echoContext(p *corev1.Pod) (echoInfo, bool) {
	for _, ct := range p.Spec.Containers {
		if !strings.Contains(ct.Image, "/echo-basic:") {
			continue
		}
		env := map[string]string{}
		for _, e := range ct.Env {
			env[e.Name] = envValue(p, e)
		}
		for _, mode := range []string{"TCP_ECHO_SERVER", "UDP_ECHO_SERVER"} {
			if env[mode] != "" {
				return echoInfo{}, false
			}
		}
		return echoInfo{Namespace: env["NAMESPACE"], Ingress: env["INGRESS_NAME"], Service: env["SERVICE_NAME"], Pod: env["POD_NAME"],
			grpc: env["GRPC_ECHO_SERVER"] != ""}, true
	}
	return echoInfo{}, false
}

// envValue resolves a literal or a metadata field reference.
func envValue(p *corev1.Pod, e corev1.EnvVar) string {
	if e.ValueFrom == nil || e.ValueFrom.FieldRef == nil {
		return e.Value
	}
	switch e.ValueFrom.FieldRef.FieldPath {
	case "metadata.name":
		return p.Name
	case "metadata.namespace":
		return p.Namespace
	}
	return ""
}

// podReady reports the Pod's Ready condition.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (c *Cluster) stopEchoes() {
	for key, e := range c.echoes {
		e.close()
		delete(c.echoes, key)
	}
}

// echoCertificate returns the certificate an echo-basic container of p
// serves HTTPS with: the files its TLS_SERVER_CERT and TLS_SERVER_PRIVKEY
// name, read from the Secret of the volume mounted there (the kubelet's
// part); nil when it is given none.
func (c *Cluster) echoCertificate(ctx context.Context, p *corev1.Pod) (*tls.Certificate, error) {
	for _, ct := range p.Spec.Containers {
		env := map[string]string{}
		for _, e := range ct.Env {
			env[e.Name] = envValue(p, e)
		}
		certPath, keyPath := env["TLS_SERVER_CERT"], env["TLS_SERVER_PRIVKEY"]
		if !strings.Contains(ct.Image, "/echo-basic:") || certPath == "" || keyPath == "" {
			continue
		}
		certPEM, err := c.secretFile(ctx, p, ct, certPath)
		if err != nil {
			return nil, err
		}
		keyPEM, err := c.secretFile(ctx, p, ct, keyPath)
		if err != nil {
			return nil, err
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, err
		}
		return &pair, nil
	}
	return nil, nil
}

// secretFile returns the content of file path of container ct of p, from
// the Secret volume mounted at its directory.
func (c *Cluster) secretFile(ctx context.Context, p *corev1.Pod, ct corev1.Container, path string) ([]byte, error) {
	for _, m := range ct.VolumeMounts {
		rel, ok := strings.CutPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/")
		if !ok {
			continue
		}
		for _, v := range p.Spec.Volumes {
			if v.Name != m.Name || v.Secret == nil {
				continue
			}
			s, err := c.kube.CoreV1().Secrets(p.Namespace).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			key := rel
			for _, it := range v.Secret.Items {
				if it.Path == rel {
					key = it.Key
				}
			}
			if data, ok := s.Data[key]; ok {
				return data, nil
			}
			return nil, fmt.Errorf("secret %s/%s has no key %s", p.Namespace, v.Secret.SecretName, key)
		}
	}
	return nil, fmt.Errorf("%s is not in a Secret volume", path)
}
