package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Benchmarks of the stream block (TCP services) on a real nginx, each
// against a direct connection to the same backend:
//
//	go test ./pkg/nginx -run '^$' -bench L4Throughput -benchtime 1x
//	go test ./pkg/nginx -run '^$' -bench L4ConnectionRate -benchtime 1x
//	go test ./pkg/nginx -run '^$' -bench L4EndpointChange -benchtime 200x

// startSource starts a TCP server that writes size bytes to each
// connection and closes it (size 1: a connection-rate backend).
func startSource(b *testing.B, size int) config.Endpoint {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	chunk := make([]byte, min(size, 256<<10))
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(testWait))
				for left := size; left > 0; left -= len(chunk) {
					if _, err := c.Write(chunk[:min(left, len(chunk))]); err != nil {
						return
					}
				}
			}()
		}
	}()
	return config.Endpoint{Address: "127.0.0.1", Port: int32(ln.Addr().(*net.TCPAddr).Port)}
}

// parallelRun runs once total/conns times in each of conns parallel
// goroutines and returns the bytes it read per second and the calls
// (connections) per second.
func parallelRun(b *testing.B, conns, total int, once func() (int64, error)) (bytesPerSec, connsPerSec float64) {
	b.Helper()
	var mu sync.Mutex
	var read int64
	var firstErr error
	start := time.Now()
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			for range total / conns {
				n, err := once()
				mu.Lock()
				read += n
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
	d := time.Since(start).Seconds()
	return float64(read) / d, float64(total/conns*conns) / d
}

// drainFrom is a parallelRun call that connects to port and reads to the
// end.
func drainFrom(port int) func() (int64, error) {
	return func() (int64, error) { return drainOnce(port) }
}

func drainOnce(port int) (int64, error) {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), l4Wait)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(testWait))
	return io.Copy(io.Discard, c)
}

// l4Bench starts nginx with one TCP service on a free port to ep and
// returns the harness and the port.
func l4Bench(b *testing.B, ep config.Endpoint) (*harness, int) {
	port := freePorts(b, 1)[0]
	h := startNginx(b, l4Config("l4-bench", tcpService(port, ep)), func(o *Options) { o.DisableAccessLog = true })
	return h, port
}

// abConns runs rounds of parallelRun of proxy and direct, in turn, after
// a warm-up, and returns the medians of each and of their ratios (of the
// bytes per second, or of the connections per second when connRate).
func abConns(b *testing.B, proxy, direct func() (int64, error), conns, total, rounds int, connRate bool) (p, d, ratio float64) {
	parallelRun(b, conns, total, proxy)
	parallelRun(b, conns, total, direct)
	var ps, ds, rs []float64
	for range rounds {
		pb, pc := parallelRun(b, conns, total, proxy)
		db, dc := parallelRun(b, conns, total, direct)
		pv, dv := pb, db
		if connRate {
			pv, dv = pc, dc
		}
		ps, ds, rs = append(ps, pv), append(ds, dv), append(rs, pv/dv)
	}
	return median(ps), median(ds), median(rs)
}

// BenchmarkL4Throughput: MB/s of 4 parallel connections that each read
// 32 MB from a backend, through a TCP service of the stream block and
// directly, in 5 alternating rounds; the median ratio is proxy/direct.
func BenchmarkL4Throughput(b *testing.B) {
	ep := startSource(b, 32<<20)
	_, port := l4Bench(b, ep)
	var proxy, direct, ratio float64
	for b.Loop() {
		proxy, direct, ratio = abConns(b, drainFrom(port), drainFrom(int(ep.Port)), 4, 8, 5, false)
	}
	b.ReportMetric(proxy/1e6, "proxy-MB/s")
	b.ReportMetric(direct/1e6, "direct-MB/s")
	b.ReportMetric(ratio, "proxy/direct")
}

// BenchmarkL4ConnectionRate: connections per second (8 parallel clients,
// 2000 connections a round, each reading one byte the backend sends
// before it closes), through a TCP service and directly, in 5 alternating
// rounds. Every proxied connection opens a second one to the backend and
// reads the listener's endpoint file (lua/l4.js).
func BenchmarkL4ConnectionRate(b *testing.B) {
	ep := startSource(b, 1)
	_, port := l4Bench(b, ep)
	var proxy, direct, ratio float64
	for b.Loop() {
		proxy, direct, ratio = abConns(b, drainFrom(port), drainFrom(int(ep.Port)), 8, 2000, 5, true)
	}
	b.ReportMetric(proxy, "proxy-conn/s")
	b.ReportMetric(direct, "direct-conn/s")
	b.ReportMetric(ratio, "proxy/direct")
}

// BenchmarkL4EndpointChange: an Apply that moves a TCP service to another
// endpoint, then new connections until one reaches it: the time from the
// start of Apply to that connection (p50, p99), and the reloads it took
// (none: the endpoint file is rewritten).
func BenchmarkL4EndpointChange(b *testing.B) {
	backends := []*tcpBackend{startTCPBackend(b, "a"), startTCPBackend(b, "b")}
	port := freePorts(b, 1)[0]
	h := startNginx(b, l4Config("l4-change", tcpService(port, backends[0].endpoint())), func(o *Options) { o.DisableAccessLog = true })
	endpointChanges(b, h, port, backends, "apply-to-traffic", func(to *tcpBackend) { h.applyL4(tcpService(port, to.endpoint())) })
}

// endpointChanges moves the stream on port between the backends, one
// change a round of b.Loop by move, and reports the time from the start
// of move to the first connection the new backend answers (metric
// prefix, p50 and p99) and the reloads the changes took (an Apply that
// reloaded, or workers that changed).
func endpointChanges(b *testing.B, h *harness, port int, backends []*tcpBackend, prefix string, move func(to *tcpBackend)) {
	workers := workerPIDs(b, h.proc.Pid())
	var lat []time.Duration
	reloads, i := 0, 0
	for b.Loop() {
		i++
		to := backends[i%len(backends)]
		start := time.Now()
		move(to)
		if !h.app.LastReload().Skipped {
			reloads++
		}
		want := to.name + " proxy=- got=x"
		for tries := 0; ; tries++ {
			if got, err := tcpCall(port, "x\n"); err == nil && got == want {
				break
			}
			if tries > 1000 {
				b.Fatalf("endpoint change %d not followed", i)
			}
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	if got := workerPIDs(b, h.proc.Pid()); !slices.Equal(got, workers) {
		reloads++ // the workers changed all the same
	}
	reportLatency(b, prefix, lat)
	b.ReportMetric(float64(reloads), "reloads")
}
