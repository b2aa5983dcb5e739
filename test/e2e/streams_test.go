package e2e

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
	"github.com/ingress-sync/ingress-sync/test/testkit/freeport"
	"github.com/ingress-sync/ingress-sync/test/testkit/netns"
)

// tcpServicesName and udpServicesName are the TCP and UDP services
// ConfigMaps of the World (in configMapNamespace); the test that writes
// them removes them.
const (
	tcpServicesName = "ingress-sync-e2e-tcp"
	udpServicesName = "ingress-sync-e2e-udp"
)

// l4Args are the flags of the watcher and the syncers naming them.
func l4Args() []string {
	return []string{"--tcp-services-configmap", configMapNamespace + "/" + tcpServicesName,
		"--udp-services-configmap", configMapNamespace + "/" + udpServicesName}
}

// lineServer is a TCP backend that greets each connection with its name,
// optionally over TLS, then closes it.
type lineServer struct {
	name string
	addr string
	l    net.Listener
}

// startLineServer listens on a fresh test-range address; with cert, every
// connection is TLS with that certificate.
func startLineServer(t *testing.T, name string, cert *certs.Pair) *lineServer {
	t.Helper()
	i := int(nextAddr.Add(1))
	l, err := net.Listen("tcp", net.JoinHostPort(netns.Addr(i), strconv.Itoa(backendPort)))
	if err != nil {
		t.Fatal(err)
	}
	if cert != nil {
		pair := tls.Certificate{Certificate: [][]byte{cert.Cert.Raw}, PrivateKey: cert.Key}
		l = tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12})
	}
	s := &lineServer{name: name, addr: l.Addr().String(), l: l}
	go s.serve()
	t.Cleanup(func() { _ = l.Close() })
	return s
}

func (s *lineServer) serve() {
	for {
		c, err := s.l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			fmt.Fprintf(c, "%s\n", s.name)
		}()
	}
}

func (s *lineServer) host() string { h, _, _ := net.SplitHostPort(s.addr); return h }

// readLine dials addr (over TLS with cfg when set) and returns the first
// line it sends, and the certificate it presented.
func readLine(ctx context.Context, addr string, cfg *tls.Config) (string, *x509.Certificate, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	var peer *x509.Certificate
	if cfg != nil {
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			return "", nil, err
		}
		peer = tc.ConnectionState().PeerCertificates[0]
		c = tc
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", peer, fmt.Errorf("read from %s: %w", addr, err)
	}
	return strings.TrimSpace(line), peer, nil
}

// setServices writes the World's TCP or UDP services ConfigMap.
func setServices(t *testing.T, name string, data map[string]string) {
	t.Helper()
	api := w.Kube.CoreV1().ConfigMaps(configMapNamespace)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: configMapNamespace, Name: name}, Data: data}
	cur, err := api.Get(t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = api.Create(t.Context(), cm, metav1.CreateOptions{})
		t.Cleanup(func() {
			if err := api.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete ConfigMap %s: %v", name, err)
			}
		})
	} else if err == nil {
		cm.ResourceVersion = cur.ResourceVersion
		_, err = api.Update(t.Context(), cm, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatalf("set ConfigMap %s: %v", name, err)
	}
}

// TestTCPServiceAndPassthrough runs, on the whole system, one TCP service
// from the TCP services ConfigMap and one SSL passthrough host beside an
// ordinary TLS host on the same HTTPS port: the TCP service follows an
// endpoint change without a reload; the passthrough host answers with its
// backend's own certificate; the ordinary host with its Secret's, and its
// backend sees the client's address.
func TestTCPServiceAndPassthrough(t *testing.T) {
	ns := setup(t)
	a, b := startLineServer(t, "db-a", nil), startLineServer(t, "db-b", nil)
	createService(t, ns, "db")
	setEndpointAddrs(t, ns, "db", a.host())
	ports, err := freeport.Ports(1)
	if err != nil {
		t.Fatal(err)
	}
	setServices(t, tcpServicesName, map[string]string{strconv.Itoa(ports[0]): ns + "/db:80"})
	tcpAnswers(t, ports[0], "db-a")
	converged(t)
	before := snapshot(t)
	setEndpointAddrs(t, ns, "db", b.host())
	tcpAnswers(t, ports[0], "db-b")
	converged(t)
	before.unchanged(t, "an endpoint change of a TCP service")

	passthroughHost(t, ns)
}

// tcpAnswers waits until port answers with want through every syncer.
func tcpAnswers(t *testing.T, port int, want string) {
	t.Helper()
	for _, s := range w.Syncers {
		addr := net.JoinHostPort(s.Address, strconv.Itoa(port))
		eventually(t, waitTimeout, "TCP service at "+addr, func() error {
			got, _, err := readLine(t.Context(), addr, nil)
			if err == nil && got != want {
				err = fmt.Errorf("%s answered %q, want %q", addr, got, want)
			}
			return err
		})
	}
}

// passthroughHost checks a passthrough host and an ordinary TLS host on
// the same port.
func passthroughHost(t *testing.T, ns string) {
	ca, err := certs.Generate(certs.Options{CommonName: "e2e passthrough CA", IsCA: true})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	pt, normal := "pt-"+ns+".example.com", "tls-"+ns+".example.com"
	own := leaf(t, ca, pt)
	argo := startLineServer(t, "argo", own)
	createService(t, ns, "argo")
	setEndpointAddrs(t, ns, "argo", argo.host())
	applyIngress(t, ours(ns, "argo", fixtures.Annotation(ingress.AnnotationPrefix+"ssl-passthrough", "true"),
		fixtures.Rule(pt, fixtures.Prefix("/", "argo", 80))))
	service(t, ns, "web")
	applySecret(t, fixtures.TLSSecret(ns, "tls", leaf(t, ca, normal)))
	applyIngress(t, ours(ns, "web", fixtures.TLS("tls", normal), fixtures.Rule(normal, fixtures.Prefix("/", "web", 80))))
	for _, s := range w.Syncers {
		addr := net.JoinHostPort(s.Address, strconv.Itoa(s.HTTPSPort))
		eventually(t, waitTimeout, "passthrough at "+addr, func() error {
			got, peer, err := readLine(t.Context(), addr, &tls.Config{ServerName: pt, RootCAs: roots, MinVersion: tls.VersionTLS12})
			switch {
			case err != nil:
				return err
			case got != "argo" || peer.SerialNumber.Cmp(own.Cert.SerialNumber) != 0:
				return fmt.Errorf("%s answered %q with certificate %v, want the backend's", addr, got, peer.Subject)
			}
			return nil
		})
	}
	routes(t, roots, map[string]string{"https://" + normal + "/": "web"})
	for i := range w.Syncers {
		r, err := echo.Get(t.Context(), w.Syncers[i].Client(roots), "https://"+normal+"/")
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Reply.Headers.Get("X-Forwarded-For"); got != "127.0.0.1" {
			t.Errorf("syncer-%d: backend saw X-Forwarded-For %q, want the client's 127.0.0.1", i, got)
		}
	}
}

// TestUDPService: a UDP service answers through every syncer and follows
// an endpoint change.
func TestUDPService(t *testing.T) {
	ns := setup(t)
	a, b := startUDPEcho(t, "dns-a"), startUDPEcho(t, "dns-b")
	svc := clean(fixtures.Service(ns, "dns", 80))
	svc.Spec.Ports[0].Protocol = corev1.ProtocolUDP
	if _, err := w.Kube.CoreV1().Services(ns).Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	es := clean(fixtures.EndpointSlice(ns, "dns-1", "dns", backendPort, a))
	udp := corev1.ProtocolUDP
	es.Ports[0].Protocol = &udp
	api := w.Kube.DiscoveryV1().EndpointSlices(ns)
	if _, err := api.Create(t.Context(), es, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ports, err := freeport.Ports(1)
	if err != nil {
		t.Fatal(err)
	}
	setServices(t, udpServicesName, map[string]string{strconv.Itoa(ports[0]): ns + "/dns:80"})
	udpAnswers(t, ports[0], "dns-a")
	es.Endpoints[0].Addresses = []string{b}
	cur, err := api.Get(t.Context(), es.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	es.ResourceVersion = cur.ResourceVersion
	if _, err := api.Update(t.Context(), es, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	udpAnswers(t, ports[0], "dns-b")
}

// startUDPEcho answers every datagram with its name, on a fresh test-range
// address; it returns the address.
func startUDPEcho(t *testing.T, name string) string {
	t.Helper()
	i := int(nextAddr.Add(1))
	s, err := echo.StartUDP(net.JoinHostPort(netns.Addr(i), strconv.Itoa(backendPort)), func([]byte) []byte { return []byte(name) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return netns.Addr(i)
}

// udpAnswers waits until a datagram to port gets want back through every
// syncer.
func udpAnswers(t *testing.T, port int, want string) {
	t.Helper()
	for _, s := range w.Syncers {
		addr := net.JoinHostPort(s.Address, strconv.Itoa(port))
		eventually(t, waitTimeout, "UDP service at "+addr, func() error {
			c, err := net.Dial("udp", addr)
			if err != nil {
				return err
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(time.Second))
			if _, err := c.Write([]byte("q")); err != nil {
				return err
			}
			buf := make([]byte, 64)
			n, err := c.Read(buf)
			if err != nil {
				return err
			}
			if got := string(buf[:n]); got != want {
				return fmt.Errorf("%s answered %q, want %q", addr, got, want)
			}
			return nil
		})
	}
}
