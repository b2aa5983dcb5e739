package freeport

import (
	"net"
	"strconv"
	"testing"
)

func TestPortsAreDistinctAndFree(t *testing.T) {
	ports, err := Ports(8)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] {
			t.Fatalf("port %d returned twice in %v", p, ports)
		}
		seen[p] = true
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatalf("port %d not free after Ports returned: %v", p, err)
		}
		l.Close()
	}
}
