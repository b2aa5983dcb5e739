package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"bufio"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Tests of the streams of Gateway listeners (config.Stream: TLSRoute
// passthrough by SNI, TCPRoute, UDPRoute) on a real nginx.

// applyStreams applies the running Configuration with streams.
func (h *harness) applyStreams(streams ...config.Stream) {
	h.t.Helper()
	next := *h.app.Running()
	h.version++
	next.Streams, next.Checksum = streams, fmt.Sprintf("streams+%d", h.version)
	if _, err := applyDiff(h.t.Context(), h.app, &next); err != nil {
		h.t.Fatalf("apply: %v", err)
	}
}

func streamOf(p config.L4Protocol, port int, host string, backends ...config.StreamBackend) config.Stream {
	return config.Stream{Protocol: p, Port: port, Hostname: host, Gateway: "infra/edge", Route: "TCPRoute app/r", Backends: backends}
}

func weightedTo(w int, eps ...config.Endpoint) config.StreamBackend {
	return config.StreamBackend{Namespace: "app", Service: "svc", Port: 80, Weight: w, Endpoints: eps}
}

// sniCall makes a TLS connection with sni to port and returns the serial
// of the certificate presented and the first line received.
func sniCall(port int, sni string) (serial, line string, err error) {
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: l4Wait}, Config: &tls.Config{ServerName: sni, InsecureSkipVerify: true}} //nolint:gosec // the serial is checked
	conn, err := d.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return "", "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(l4Wait))
	serial = conn.(*tls.Conn).ConnectionState().PeerCertificates[0].SerialNumber.String()
	line, err = bufio.NewReader(conn).ReadString('\n')
	return serial, strings.TrimSpace(line), err
}

func TestGatewayTLSPassthroughBySNI(t *testing.T) {
	ca := newTestCA(t)
	port := freePorts(t, 1)[0]
	abc, abcSerial := startTLSBackend(t, ca, "abc", "abc.example.com")
	wild, wildSerial := startTLSBackend(t, ca, "wild", "x.example.com")
	deeper, deeperSerial := startTLSBackend(t, ca, "deeper", "a.b.example.com")
	cfg := configOf("tls-1", nil)
	cfg.Streams = []config.Stream{
		streamOf(config.L4TLS, port, "*.b.example.com", weightedTo(1, deeper)),
		streamOf(config.L4TLS, port, "*.example.com", weightedTo(1, wild)),
		streamOf(config.L4TLS, port, "abc.example.com", weightedTo(1, abc)),
	}
	h := startNginx(t, cfg, nil)
	workers := workerPIDs(t, h.proc.Pid())
	tests := []struct{ sni, serial, line string }{
		{"abc.example.com", abcSerial, "abc"},
		{"ABC.example.com", abcSerial, "abc"},
		{"other.example.com", wildSerial, "wild"},
		{"a.b.example.com", deeperSerial, "deeper"},
		{"x.y.example.com", wildSerial, "wild"},
	}
	for _, tc := range tests {
		t.Run("SNI "+tc.sni, func(t *testing.T) {
			serial, line, err := sniCall(port, tc.sni)
			if err != nil || serial != tc.serial || line != tc.line {
				t.Fatalf("serial %s, %q, %v; want %s from %s (unterminated)", serial, line, err, tc.serial, tc.line)
			}
		})
	}
	t.Run("a name no route has is closed", func(t *testing.T) {
		if _, _, err := sniCall(port, "example.org"); err == nil {
			t.Fatal("example.org: want the connection closed")
		}
		if _, _, err := sniCall(port, "example.com"); err == nil {
			t.Fatal("example.com (the apex a wildcard does not match): want the connection closed")
		}
	})
	t.Run("a new route and new endpoints do not reload", func(t *testing.T) {
		h.applyStreams(
			streamOf(config.L4TLS, port, "*.example.com", weightedTo(1, abc)),
			streamOf(config.L4TLS, port, "new.example.org", weightedTo(1, deeper)))
		checkNotReloaded(t, h, workers)
		if serial, _, err := sniCall(port, "other.example.com"); err != nil || serial != abcSerial {
			t.Fatalf("other.example.com: serial %s, %v; want %s", serial, err, abcSerial)
		}
		if serial, _, err := sniCall(port, "new.example.org"); err != nil || serial != deeperSerial {
			t.Fatalf("new.example.org: serial %s, %v; want %s", serial, err, deeperSerial)
		}
	})
	t.Run("a route for any name", func(t *testing.T) {
		h.applyStreams(streamOf(config.L4TLS, port, "", weightedTo(1, wild)))
		checkNotReloaded(t, h, workers)
		if serial, _, err := sniCall(port, "anything.test"); err != nil || serial != wildSerial {
			t.Fatalf("anything.test: serial %s, %v; want %s", serial, err, wildSerial)
		}
	})
}

func TestGatewayTCPAndUDPStreams(t *testing.T) {
	ports := freePorts(t, 2)
	a, b := startTCPBackend(t, "a"), startTCPBackend(t, "b")
	udp := startUDPBackend(t, "u")
	cfg := configOf("streams-1", nil)
	cfg.Streams = []config.Stream{
		streamOf(config.L4TCP, ports[0], "", weightedTo(1, a.endpoint())),
		streamOf(config.L4UDP, ports[1], "", weightedTo(1, udp)),
	}
	h := startNginx(t, cfg, nil)
	workers := workerPIDs(t, h.proc.Pid())
	checkTCP(t, ports[0], "hello\n", "a proxy=- got=hello")
	if got, err := udpCall(ports[1], "ping"); err != nil || got != "u got=ping" {
		t.Fatalf("UDP: %q, %v", got, err)
	}

	t.Run("endpoint change: no reload", func(t *testing.T) {
		h.applyStreams(streamOf(config.L4TCP, ports[0], "", weightedTo(1, b.endpoint())), cfg.Streams[1])
		checkNotReloaded(t, h, workers)
		checkTCP(t, ports[0], "x\n", "b proxy=- got=x")
	})
	t.Run("weights: a backend of weight 0 gets nothing, one without endpoints closes its share", func(t *testing.T) {
		h.applyStreams(streamOf(config.L4TCP, ports[0], "", weightedTo(0, a.endpoint()), weightedTo(1, b.endpoint())), cfg.Streams[1])
		checkNotReloaded(t, h, workers)
		for range 20 {
			checkTCP(t, ports[0], "x\n", "b proxy=- got=x")
		}
		h.applyStreams(streamOf(config.L4TCP, ports[0], "", weightedTo(1)), cfg.Streams[1])
		checkClosed(t, ports[0])
	})
	t.Run("weights: both backends take connections", func(t *testing.T) {
		h.applyStreams(streamOf(config.L4TCP, ports[0], "", weightedTo(1, a.endpoint()), weightedTo(3, b.endpoint())), cfg.Streams[1])
		checkNotReloaded(t, h, workers)
		seen := map[string]int{}
		for i := 0; i < 400 && (seen["a proxy=- got=x"] == 0 || seen["b proxy=- got=x"] == 0); i++ {
			got, err := tcpCall(ports[0], "x\n")
			if err != nil {
				t.Fatal(err)
			}
			seen[got]++
		}
		if seen["a proxy=- got=x"] == 0 || seen["b proxy=- got=x"] == 0 {
			t.Fatalf("answers %v: want both backends", seen)
		}
	})
}

func TestGatewayStreamPortReloadsOnce(t *testing.T) {
	ports := freePorts(t, 2)
	a := startTCPBackend(t, "a")
	cfg := configOf("streams-ports", nil)
	cfg.Streams = []config.Stream{streamOf(config.L4TCP, ports[0], "", weightedTo(1, a.endpoint()))}
	h := startNginx(t, cfg, nil)
	h.applyStreams(cfg.Streams[0], streamOf(config.L4TCP, ports[1], "", weightedTo(1, a.endpoint())))
	if h.app.LastReload().Skipped {
		t.Fatal("a new port did not reload")
	}
	checkTCP(t, ports[1], "y\n", "a proxy=- got=y")
	workers := workerPIDs(t, h.proc.Pid())
	h.applyStreams(cfg.Streams[0], streamOf(config.L4TCP, ports[1], "", weightedTo(2, a.endpoint())))
	checkNotReloaded(t, h, workers)
	checkTCP(t, ports[1], "y\n", "a proxy=- got=y")
}
