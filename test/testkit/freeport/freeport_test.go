package freeport

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
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

// Separate calls never return the same port (the old Ports could: it
// released its ports, and the kernel hands a released port out again).
func TestSeparateCallsDiffer(t *testing.T) {
	seen := map[int]bool{}
	for range 300 {
		ports, err := Ports(2)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ports {
			if seen[p] {
				t.Fatalf("port %d returned by two calls", p)
			}
			seen[p] = true
		}
	}
}

// The ports are outside the ephemeral range, which bind(":0") and outgoing
// connections take their ports from.
func TestPortsOutsideEphemeralRange(t *testing.T) {
	lo, hi := ephemeralRange()
	if rlo, rhi := portRange(); rhi-rlo < 1000 || (rlo <= hi && rhi >= lo) {
		t.Skipf("the ephemeral range %d-%d leaves no range of 1000 ports above %d (range %d-%d)", lo, hi, lowest, rlo, rhi)
	}
	ports, err := Ports(20)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ports {
		if p >= lo && p <= hi {
			t.Errorf("port %d is in the ephemeral range %d-%d", p, lo, hi)
		}
	}
	// And bind(":0") gets none of them.
	for range 200 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		for _, q := range ports {
			if p == q {
				t.Fatalf("bind(:0) got port %d of freeport", p)
			}
		}
	}
}

// A port held by another process is not handed out: the child takes 200
// ports and keeps them while this process takes 200 more.
func TestOtherProcessPortsAreNotHandedOut(t *testing.T) {
	if os.Getenv("FREEPORT_CHILD") == "1" {
		ports, err := Ports(200)
		if err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		var b strings.Builder
		for _, p := range ports {
			b.WriteString(strconv.Itoa(p) + " ")
		}
		os.Stdout.WriteString(b.String() + "\n")
		// Hold the locks until the parent closes stdin.
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOtherProcessPortsAreNotHandedOut$")
	cmd.Env = append(os.Environ(), "FREEPORT_CHILD=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("child: %v (%q)", err, line)
	}
	theirs := map[int]bool{}
	for _, f := range strings.Fields(line) {
		p, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("child: %q", line)
		}
		theirs[p] = true
	}
	if len(theirs) != 200 {
		t.Fatalf("child returned %d ports: %q", len(theirs), line)
	}
	// Start where the child started, so that the ranges overlap.
	state.Lock()
	if state.lockFile == nil {
		if err := initState(); err != nil {
			state.Unlock()
			t.Fatal(err)
		}
	}
	first := 65536
	for p := range theirs {
		first = min(first, p)
	}
	state.next, state.tried = first, 0
	state.Unlock()
	mine, err := Ports(200)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range mine {
		if theirs[p] {
			t.Fatalf("port %d handed out to both processes", p)
		}
	}
}
