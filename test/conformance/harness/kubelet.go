package harness

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ingress-sync/ingress-sync/internal/certs"
)

// The kubelet API of the node, the one part of it the conformance suite
// reads: the logs of echo-basic containers (GET
// /containerLogs/<namespace>/<pod>/<container>, which the API server's
// pods/log proxies to the node's InternalIP and kubeletPort), through
// which the mirror tests see the requests a mirror received. echo-basic
// logs a line per request it echoes; the harness keeps the last
// maxLogLines of each Pod's.
const (
	kubeletPort = 10250
	maxLogLines = 50000
)

// Kubelet serves the kubelet API over TLS with a certificate of its own CA,
// which the API server trusts through APIServerFlags.
type Kubelet struct {
	caFile string
	cert   tls.Certificate
	book   *logBook
}

// NewKubelet makes the kubelet's CA and serving certificate (for the node's
// address), writing the CA to dir.
func NewKubelet(dir string) (*Kubelet, error) {
	ca, err := certs.Generate(certs.Options{CommonName: "harness kubelet CA", IsCA: true})
	if err != nil {
		return nil, err
	}
	srv, err := certs.Generate(certs.Options{Hosts: []string{hostIP, nodeName}, Parent: ca.Cert, ParentKey: ca.Key})
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(srv.CertPEM, srv.KeyPEM)
	if err != nil {
		return nil, err
	}
	k := &Kubelet{caFile: filepath.Join(dir, "kubelet-ca.crt"), cert: cert, book: &logBook{}}
	return k, os.WriteFile(k.caFile, ca.CertPEM, 0o644)
}

// APIServerFlags are the kube-apiserver flags that reach this kubelet: its
// CA, and the node's InternalIP (the node has no resolvable host name).
func (k *Kubelet) APIServerFlags() []string {
	return []string{"--kubelet-certificate-authority=" + k.caFile, "--kubelet-preferred-address-types=InternalIP"}
}

// Serve answers on the node's address until ctx ends.
func (k *Kubelet) Serve(ctx context.Context) error {
	l, err := net.Listen("tcp", net.JoinHostPort(hostIP, strconv.Itoa(kubeletPort)))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(k.containerLogs), ReadHeaderTimeout: 5 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{k.cert}, MinVersion: tls.VersionTLS12}}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.ServeTLS(l, "", ""); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// containerLogs answers GET /containerLogs/<ns>/<pod>/<container> with the
// Pod's lines since sinceTime (RFC 3339), each after its time with
// timestamps=true.
func (k *Kubelet) containerLogs(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/containerLogs/"), "/")
	if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/containerLogs/") || len(parts) != 3 {
		http.NotFound(w, r)
		return
	}
	var since time.Time
	if s := r.URL.Query().Get("sinceTime"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		since = t
	}
	stamps := r.URL.Query().Get("timestamps") == "true"
	w.Header().Set("Content-Type", "text/plain")
	for _, l := range k.book.of(parts[0] + "/" + parts[1]).since(since) {
		if stamps {
			fmt.Fprintf(w, "%s ", l.at.Format(time.RFC3339Nano))
		}
		fmt.Fprintln(w, l.text)
	}
}

// logBook holds the logs of the Pods, by "namespace/name".
type logBook struct {
	pods sync.Map
}

// of returns the log of Pod key, made on first use.
func (b *logBook) of(key string) *podLog {
	if b == nil {
		return nil
	}
	l, _ := b.pods.LoadOrStore(key, &podLog{})
	return l.(*podLog)
}

func (b *logBook) forget(key string) {
	if b != nil {
		b.pods.Delete(key)
	}
}

// podLog is the last maxLogLines lines of one Pod.
type podLog struct {
	mu    sync.Mutex
	lines []logLine
}

type logLine struct {
	at   time.Time
	text string
}

// printf adds a line (a nil log keeps nothing).
func (p *podLog) printf(format string, args ...any) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.lines) == maxLogLines {
		p.lines = append(p.lines[:0], p.lines[maxLogLines/2:]...)
	}
	p.lines = append(p.lines, logLine{at: time.Now(), text: fmt.Sprintf(format, args...)})
}

// since returns the lines at or after t.
func (p *podLog) since(t time.Time) []logLine {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []logLine
	for _, l := range p.lines {
		if !l.at.Before(t) {
			out = append(out, l)
		}
	}
	return out
}
