// Package freeport finds free TCP ports on 127.0.0.1 for the servers that
// tests, the demo and the benchmarks start.
package freeport

import (
	"fmt"
	"net"
)

// Ports returns n distinct free TCP ports on 127.0.0.1. All are reserved
// at once and released together, so they differ from each other (ports
// taken by separate calls may coincide).
func Ports(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("freeport: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
