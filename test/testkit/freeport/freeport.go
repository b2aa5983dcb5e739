// Package freeport hands out TCP ports on 127.0.0.1 for the servers that
// tests, the demo and the benchmarks start. A port it returns stays theirs
// until the process exits, whatever else runs on the machine:
//
//   - It comes from outside the kernel's ephemeral range
//     (net.ipv4.ip_local_port_range), so no process gets it from bind(":0")
//     or as the local port of an outgoing connection.
//   - It is locked machine-wide for the life of the process (an
//     open-file-description lock on byte <port> of one shared file), so two
//     processes that use freeport never get the same port, and a port
//     outlives the server of one test (a restarted server can bind it again).
//   - It is never returned twice within a process.
//
// Reserving a port by binding it and closing the listener, as this package
// did before, left it free for anyone: another package's test (or another
// call in the same process) could get it before the server bound it. Two
// nginx listeners on one port are merged into one socket, so such a
// collision could go unnoticed until requests got the wrong server's answer
// (pkg/nginx TestRequestPathCompiles: every request answered 400 when its
// backend's port was nginx's own HTTPS port).
package freeport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// fOFDSetLK is F_OFD_SETLK (Linux 3.15+): an open file description lock,
// owned by the open file rather than the process, so it is released only
// when this process exits (or closes lockFile, which it never does).
const fOFDSetLK = 37

// lowest is the lowest port handed out: above the fixed ports of the demo
// and of the manifests (4222, 6443, 8080, 8443, 10246, 10254, 18246).
const lowest = 20000

// LockPath is the file whose bytes are the ports' locks.
var LockPath = filepath.Join(os.TempDir(), "ingress-sync-freeport.lock")

var state struct {
	sync.Mutex
	lockFile *os.File
	lo, hi   int // the range, inclusive
	next     int // the next port to try
	tried    int // ports tried since the range was last wrapped
}

// Ports returns n distinct ports of 127.0.0.1 that nothing listens on and
// that no other caller of Ports, in this process or another, gets until
// this process exits.
func Ports(n int) ([]int, error) {
	state.Lock()
	defer state.Unlock()
	if state.lockFile == nil {
		if err := initState(); err != nil {
			return nil, err
		}
	}
	ports := make([]int, 0, n)
	size := state.hi - state.lo + 1
	for len(ports) < n {
		if state.tried >= size {
			return nil, fmt.Errorf("freeport: no free port left in %d-%d", state.lo, state.hi)
		}
		p := state.next
		state.tried++
		state.next++
		if state.next > state.hi {
			state.next = state.lo
		}
		ok, err := lock(p)
		if err != nil {
			return nil, err
		}
		if ok && bindable(p) {
			ports = append(ports, p)
		}
	}
	return ports, nil
}

func initState() error {
	f, err := os.OpenFile(LockPath, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return fmt.Errorf("freeport: %w", err)
	}
	_ = f.Chmod(0o666) // other users' tests share it
	lo, hi := portRange()
	state.lockFile, state.lo, state.hi = f, lo, hi
	// A random start spreads concurrent processes over the range.
	state.next = lo + rand.IntN(hi-lo+1)
	return nil
}

// portRange is the largest range of ports at or above lowest that is
// outside the ephemeral range; the whole unprivileged range if the
// ephemeral range leaves less than 1000 ports.
func portRange() (lo, hi int) {
	elo, ehi := ephemeralRange()
	below := [2]int{lowest, elo - 1}
	above := [2]int{max(ehi+1, lowest), 65535}
	best := below
	if above[1]-above[0] > below[1]-below[0] {
		best = above
	}
	if best[1]-best[0] < 1000 {
		return lowest, 65535
	}
	return best[0], best[1]
}

// ephemeralRange reads net.ipv4.ip_local_port_range (Linux's default
// 32768-60999 when it cannot be read).
func ephemeralRange() (lo, hi int) {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		f := strings.Fields(string(data))
		if len(f) == 2 {
			l, err1 := strconv.Atoi(f[0])
			h, err2 := strconv.Atoi(f[1])
			if err1 == nil && err2 == nil && l <= h {
				return l, h
			}
		}
	}
	return 32768, 60999
}

// lock takes the machine-wide lock of port p; false if another process
// holds it.
func lock(p int) (bool, error) {
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: int64(p), Len: 1}
	err := syscall.FcntlFlock(state.lockFile.Fd(), fOFDSetLK, &lk)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EACCES):
		return false, nil
	default:
		return false, fmt.Errorf("freeport: lock %s: %w", LockPath, err)
	}
}

// bindable reports whether TCP and UDP port p of 127.0.0.1 are free now
// (something outside freeport may use a port of the range).
func bindable(p int) bool {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	_ = l.Close()
	c, err := net.ListenPacket("udp", addr)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}
