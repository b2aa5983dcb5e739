package echo

import (
	"fmt"
	"net"
)

// UDPServer answers datagrams: the UDP backend of tests (a DNS resolver, a
// UDP service behind nginx's stream proxy).
type UDPServer struct {
	// Addr is the bound address, after StartUDP.
	Addr string
	pc   net.PacketConn
}

// StartUDP listens on addr ("127.0.0.1:0", "198.18.0.1:8080") and, until
// Close, sends back answer(datagram) for every datagram; a nil answer
// sends nothing.
func StartUDP(addr string, answer func([]byte) []byte) (*UDPServer, error) {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("echo udp: %w", err)
	}
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if reply := answer(buf[:n]); reply != nil {
				_, _ = pc.WriteTo(reply, from)
			}
		}
	}()
	return &UDPServer{Addr: pc.LocalAddr().String(), pc: pc}, nil
}

// Port is the bound port.
func (s *UDPServer) Port() int { return s.pc.LocalAddr().(*net.UDPAddr).Port }

// Close stops the server.
func (s *UDPServer) Close() error { return s.pc.Close() }
