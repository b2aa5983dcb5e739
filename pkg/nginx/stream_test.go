package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
)

// Tests of the stream block on a real nginx: TCP and UDP services, their
// PROXY protocol options, endpoint and port changes (passthrough_test.go
// has SSL passthrough).

const l4Wait = 5 * time.Second

// tcpBackend answers each connection with one line naming itself, the
// PROXY header it received ("-": none) and the client's first line.
type tcpBackend struct {
	name  string
	ln    net.Listener
	conns atomic.Int64
}

func startTCPBackend(t testing.TB, name string) *tcpBackend {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &tcpBackend{name: name, ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b.conns.Add(1)
			go b.serve(c)
		}
	}()
	return b
}

func (b *tcpBackend) serve(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(l4Wait))
	r := bufio.NewReader(c)
	line, _ := r.ReadString('\n')
	proxy := "-"
	if strings.HasPrefix(line, "PROXY ") {
		proxy = strings.TrimSpace(line)
		line, _ = r.ReadString('\n')
	}
	fmt.Fprintf(c, "%s proxy=%s got=%s\n", b.name, proxy, strings.TrimSpace(line))
}

func (b *tcpBackend) endpoint() config.Endpoint {
	return config.Endpoint{Address: "127.0.0.1", Port: int32(b.ln.Addr().(*net.TCPAddr).Port)}
}

// udpBackend answers each datagram with "<name> got=<datagram>".
func startUDPBackend(t testing.TB, name string) config.Endpoint {
	t.Helper()
	s, err := echo.StartUDP("127.0.0.1:0", func(d []byte) []byte { return []byte(name + " got=" + string(d)) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return config.Endpoint{Address: "127.0.0.1", Port: int32(s.Port())}
}

// tcpCall sends send (a line) to 127.0.0.1:port and returns the answer's
// first line; io.EOF when nginx closed the connection without one.
func tcpCall(port int, send string) (string, error) {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), l4Wait)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(l4Wait))
	if _, err := io.WriteString(c, send); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(line), nil
}

// udpCall sends one datagram to 127.0.0.1:port and returns the answer.
func udpCall(port int, send string) (string, error) {
	c, err := net.Dial("udp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, send); err != nil {
		return "", err
	}
	buf := make([]byte, 2048)
	n, err := c.Read(buf)
	return string(buf[:n]), err
}

func tcpService(port int, eps ...config.Endpoint) config.L4Service {
	return config.L4Service{Protocol: config.L4TCP, Port: port, Namespace: "default", Service: "svc", ServicePort: "80", Endpoints: eps}
}

// l4Config returns a Configuration with the L4 services l4 and no hosts.
func l4Config(sum string, l4 ...config.L4Service) *config.Configuration {
	cfg := configOf(sum, nil)
	cfg.L4 = l4
	return cfg
}

// applyL4 applies the running Configuration with l4 as its L4 services.
func (h *harness) applyL4(l4 ...config.L4Service) {
	h.t.Helper()
	next := *h.app.Running()
	h.version++
	next.L4, next.Checksum = l4, fmt.Sprintf("l4+%d", h.version)
	if _, err := applyDiff(h.t.Context(), h.app, &next); err != nil {
		h.t.Fatalf("apply: %v", err)
	}
}

func checkTCP(t *testing.T, port int, send, want string) {
	t.Helper()
	if got, err := tcpCall(port, send); err != nil || got != want {
		t.Fatalf("TCP %d: %q, %v; want %q", port, got, err, want)
	}
}

// checkClosed fails unless a connection to port is closed without an
// answer (no endpoints).
func checkClosed(t *testing.T, port int) {
	t.Helper()
	var ne net.Error
	if got, err := tcpCall(port, "hello\n"); err == nil || errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("TCP %d without endpoints: %q, %v; want the connection closed at once", port, got, err)
	}
}

func TestL4TCPAndUDP(t *testing.T) {
	ports := freePorts(t, 2)
	tcp := startTCPBackend(t, "tcp-a")
	udp := startUDPBackend(t, "udp-a")
	cfg := l4Config("l4-1", tcpService(ports[0], tcp.endpoint()),
		config.L4Service{Protocol: config.L4UDP, Port: ports[1], Namespace: "default", Service: "dns", ServicePort: "53",
			Endpoints: []config.Endpoint{udp}})
	h := startNginx(t, cfg, nil)

	checkTCP(t, ports[0], "hello\n", "tcp-a proxy=- got=hello")
	if got, err := udpCall(ports[1], "ping"); err != nil || got != "udp-a got=ping" {
		t.Fatalf("UDP: %q, %v", got, err)
	}
	// The HTTP server still answers.
	if r := h.mustGet("http://any.test/"); r.Status != 404 {
		t.Fatalf("HTTP: %d", r.Status)
	}
}

func TestL4ProxyProtocol(t *testing.T) {
	ports := freePorts(t, 3)
	b := startTCPBackend(t, "b")
	encode, decode, both := tcpService(ports[0], b.endpoint()), tcpService(ports[1], b.endpoint()), tcpService(ports[2], b.endpoint())
	encode.EncodeProxy = true
	decode.DecodeProxy = true
	both.DecodeProxy, both.EncodeProxy = true, true
	startNginx(t, l4Config("l4-proxy", encode, decode, both), nil)

	t.Run("encode: the backend gets the client address", func(t *testing.T) {
		got, err := tcpCall(ports[0], "hello\n")
		want := "b proxy=PROXY TCP4 127.0.0.1 127.0.0.1 "
		if err != nil || !strings.HasPrefix(got, want) || !strings.HasSuffix(got, fmt.Sprintf(" %d got=hello", ports[0])) {
			t.Fatalf("%q, %v; want %q...", got, err, want)
		}
	})
	header := func(port int) string { return fmt.Sprintf("PROXY TCP4 192.0.2.7 127.0.0.1 40000 %d\r\n", port) }
	t.Run("decode: a client with a PROXY header gets through", func(t *testing.T) {
		checkTCP(t, ports[1], header(ports[1])+"hello\n", "b proxy=- got=hello")
	})
	t.Run("decode: a client without one does not", func(t *testing.T) {
		if got, err := tcpCall(ports[1], "hello\n"); err == nil {
			t.Fatalf("%q: want the connection closed", got)
		}
	})
	t.Run("decode and encode: the client address of the header reaches the backend", func(t *testing.T) {
		checkTCP(t, ports[2], header(ports[2])+"hello\n", fmt.Sprintf("b proxy=PROXY TCP4 192.0.2.7 127.0.0.1 40000 %d got=hello", ports[2]))
	})
}

func TestL4EndpointChangesWithoutReload(t *testing.T) {
	port := freePorts(t, 1)[0]
	a, b := startTCPBackend(t, "a"), startTCPBackend(t, "b")
	h := startNginx(t, l4Config("l4-eps", tcpService(port, a.endpoint())), nil)
	workers := workerPIDs(t, h.proc.Pid())
	checkTCP(t, port, "x\n", "a proxy=- got=x")

	h.applyL4(tcpService(port, b.endpoint()))
	checkNotReloaded(t, h, workers)
	for range 5 {
		checkTCP(t, port, "x\n", "b proxy=- got=x")
	}

	h.applyL4(tcpService(port))
	checkNotReloaded(t, h, workers)
	checkClosed(t, port)

	h.applyL4(tcpService(port, a.endpoint(), b.endpoint()))
	checkNotReloaded(t, h, workers)
	seen := map[string]bool{}
	for i := 0; i < 200 && len(seen) < 2; i++ {
		got, err := tcpCall(port, "x\n")
		if err != nil {
			t.Fatal(err)
		}
		seen[got] = true
	}
	if !seen["a proxy=- got=x"] || !seen["b proxy=- got=x"] {
		t.Fatalf("two endpoints: answers %v", seen)
	}
}

func TestL4PortsAddedAndRemoved(t *testing.T) {
	ports := freePorts(t, 2)
	a := startTCPBackend(t, "a")
	h := startNginx(t, l4Config("l4-ports", tcpService(ports[0], a.endpoint())), nil)
	checkTCP(t, ports[0], "x\n", "a proxy=- got=x")

	h.applyL4(tcpService(ports[0], a.endpoint()), tcpService(ports[1], a.endpoint()))
	if h.app.LastReload().Skipped {
		t.Fatal("a new port did not reload")
	}
	checkTCP(t, ports[1], "y\n", "a proxy=- got=y")
	if _, err := readFile(h, "tcp-"+itoa(ports[1])+".json"); err != nil {
		t.Fatal(err)
	}

	h.applyL4(tcpService(ports[1], a.endpoint()))
	if h.app.LastReload().Skipped {
		t.Fatal("a removed port did not reload")
	}
	checkTCP(t, ports[1], "y\n", "a proxy=- got=y")
	if _, err := tcpCall(ports[0], "x\n"); err == nil {
		t.Fatalf("removed port %d still answers", ports[0])
	}
	if _, err := readFile(h, "tcp-"+itoa(ports[0])+".json"); err == nil {
		t.Fatal("the file of the removed port is still there")
	}

	h.applyL4() // the last one: the stream block goes
	if _, err := tcpCall(ports[1], "y\n"); err == nil {
		t.Fatalf("removed port %d still answers", ports[1])
	}
}

func readFile(h *harness, name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(h.opts.streamDir(), name))
}
