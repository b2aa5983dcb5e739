package demo

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"
)

// forward accepts connections on l (a listener made in the host's network
// namespace and inherited by this process) and connects each to target
// (an address inside this process's namespace), until ctx is done.
func forward(ctx context.Context, log *slog.Logger, l net.Listener, target string) {
	go func() {
		<-ctx.Done()
		_ = l.Close()
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() == nil {
				log.Error("forwarder stopped", "listen", l.Addr().String(), "err", err)
			}
			return
		}
		wg.Go(func() { pipe(ctx, log, c, target) })
	}
}

func pipe(ctx context.Context, log *slog.Logger, c net.Conn, target string) {
	defer c.Close()
	d := net.Dialer{Timeout: 5 * time.Second}
	t, err := d.DialContext(ctx, "tcp", target)
	if err != nil {
		log.Warn("forward dial failed", "target", target, "err", err)
		return
	}
	defer t.Close()
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(t, c)
	go cp(c, t)
	select {
	case <-done:
		<-done
	case <-ctx.Done():
	}
}
