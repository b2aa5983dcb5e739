package netns

import (
	"net"
	"os"
	"testing"
)

// TestMain re-executes the tests in a private network namespace.
func TestMain(m *testing.M) {
	if !Inside() {
		code, err := Reexec()
		if err != nil {
			// Never skip silently: the e2e suite depends on this.
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(code)
	}
	if err := Setup(); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func TestRangeIsLocalInside(t *testing.T) {
	l, err := net.Listen("tcp", net.JoinHostPort(Addr(7), "0"))
	if err != nil {
		t.Fatalf("listen on the test range inside the namespace: %v", err)
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Write([]byte("hi"))
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatalf("dial inside the namespace: %v", err)
	}
	defer c.Close()
	buf := make([]byte, 2)
	if _, err := c.Read(buf); err != nil || string(buf) != "hi" {
		t.Fatalf("read %q, %v", buf, err)
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	if len(ifaces) != 1 || ifaces[0].Name != "lo" {
		t.Fatalf("interfaces %v, want only lo in a private namespace", ifaces)
	}
}
