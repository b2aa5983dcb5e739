package harness

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/websocket"
	"google.golang.org/grpc"
)

// The ports echo-basic listens on: HTTP/1.1 and h2c, and HTTPS when its
// Pod gives it a certificate (TLS_SERVER_CERT and TLS_SERVER_PRIVKEY, files
// of a Secret volume: the suite's tls-backend, for BackendTLSPolicy); or in
// gRPC mode its gRPC echo on the HTTP port (grpcecho.go). (Its TCP and UDP
// modes serve other profiles.)
const (
	echoHTTPPort  = 3000
	echoH2CPort   = 3001
	echoHTTPSPort = 8443
)

// echoInfo is what echo-basic learns from its environment.
type echoInfo struct {
	Namespace string `json:"namespace"`
	Ingress   string `json:"ingress"`
	Service   string `json:"service"`
	Pod       string `json:"pod"`
	// grpc: the Pod runs echo-basic's gRPC echo (GRPC_ECHO_SERVER).
	grpc bool
}

// echoReply is echo-basic's answer, the JSON the conformance suite reads
// (its roundtripper.CapturedRequest).
type echoReply struct {
	Path     string              `json:"path"`
	Host     string              `json:"host"`
	Method   string              `json:"method"`
	Proto    string              `json:"proto"`
	Headers  map[string][]string `json:"headers"`
	HTTPPort string              `json:"httpPort"`
	TLS      *echoTLS            `json:"tls,omitempty"`
	echoInfo
}

// echoTLS is what echo-basic says of a request's TLS connection.
type echoTLS struct {
	Version            string `json:"version"`
	ServerName         string `json:"serverName"`
	NegotiatedProtocol string `json:"negotiatedProtocol"`
	CipherSuite        string `json:"cipherSuite"`
}

// echoPod is the servers answering for one Pod.
type echoPod struct {
	servers []*http.Server
	grpc    *grpc.Server
}

// startEchoPod listens on ip's echo-basic ports, logging to log; on the
// HTTPS one with cert, when not nil.
func startEchoPod(ip netip.Addr, info echoInfo, log *podLog, cert *tls.Certificate) (*echoPod, error) {
	e := &echoPod{}
	ports := []int{echoHTTPPort, echoH2CPort}
	if cert != nil {
		ports = append(ports, echoHTTPSPort)
	}
	for _, port := range ports {
		l, err := net.Listen("tcp", netip.AddrPortFrom(ip, uint16(port)).String())
		if err != nil {
			e.close()
			return nil, err
		}
		if port == echoHTTPSPort {
			l = tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12})
		}
		h := echoHandler{info: info, port: strconv.Itoa(echoHTTPPort), h2cOnly: port == echoH2CPort, log: log}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, Protocols: new(http.Protocols)}
		srv.Protocols.SetHTTP1(true)
		srv.Protocols.SetUnencryptedHTTP2(port == echoH2CPort)
		go func() { _ = srv.Serve(l) }()
		e.servers = append(e.servers, srv)
	}
	return e, nil
}

func (e *echoPod) close() {
	if e.grpc != nil {
		e.grpc.Stop()
	}
	for _, s := range e.servers {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if err := s.Shutdown(ctx); err != nil {
			_ = s.Close()
		}
		cancel()
	}
}

// echoHandler answers as echo-basic does: /health, /status/NNN, /ws (a
// WebSocket that sends back every message), and any
// other path with the request as JSON, after ?delay= and with the response
// headers that X-Echo-Set-Header asks for. No ServeMux: paths with "//"
// are answered, not redirected.
type echoHandler struct {
	info    echoInfo
	port    string
	h2cOnly bool
	log     *podLog
}

func (h echoHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.ReplaceAll(r.URL.Path, "//", "/")
	switch {
	case h.h2cOnly && r.ProtoMajor != 2:
		http.Error(w, "Expected h2c request", http.StatusBadRequest)
	case path == "/health":
		_, _ = w.Write([]byte("OK"))
	case path == "/ws":
		websocket.Handler(echoWebSocket).ServeHTTP(w, r)
	case strings.HasPrefix(path, "/status/"):
		w.WriteHeader(statusCode(r.RequestURI))
	default:
		h.echo(w, r)
	}
}

// statusCode is NNN of a request URI /status/NNN, else 400.
func statusCode(uri string) int {
	s, ok := strings.CutPrefix(uri, "/status/")
	if n, err := strconv.Atoi(s); ok && err == nil && len(s) == 3 {
		return n
	}
	return http.StatusBadRequest
}

func (h echoHandler) echo(w http.ResponseWriter, r *http.Request) {
	h.log.printf("Echoing back request made to %s to client (%s)", r.RequestURI, r.RemoteAddr)
	if d := r.URL.Query().Get("delay"); d != "" {
		wait, err := time.ParseDuration(d)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		time.Sleep(wait)
	}
	body, err := json.MarshalIndent(echoReply{Path: r.RequestURI, Host: r.Host, Method: r.Method, Proto: r.Proto,
		Headers: r.Header, HTTPPort: h.port, TLS: tlsOf(r.TLS), echoInfo: h.info}, "", " ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	setEchoHeaders(w.Header(), r.Header.Values("X-Echo-Set-Header"))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(body)
}

// tlsOf is the echoTLS of a connection; nil for none.
func tlsOf(cs *tls.ConnectionState) *echoTLS {
	if cs == nil {
		return nil
	}
	return &echoTLS{Version: tls.VersionName(cs.Version), ServerName: cs.ServerName,
		NegotiatedProtocol: cs.NegotiatedProtocol, CipherSuite: tls.CipherSuiteName(cs.CipherSuite)}
}

// setEchoHeaders sets the "Name:value" pairs (comma-separated, in any
// number of header values) as response headers; a name given again gets
// its values joined with commas.
func setEchoHeaders(out http.Header, values []string) {
	for _, v := range values {
		for pair := range strings.SplitSeq(v, ",") {
			name, value, _ := strings.Cut(strings.TrimSpace(pair), ":")
			if name == "" {
				continue
			}
			if cur, ok := out[name]; ok && len(cur) > 0 {
				cur[0] += "," + strings.TrimSpace(value)
				continue
			}
			out[name] = []string{value}
		}
	}
}

// wsMessage is one WebSocket message and its frame type (text or binary).
type wsMessage struct {
	data []byte
	typ  byte
}

// wsRaw reads and writes messages with their frame type as they are.
var wsRaw = websocket.Codec{
	Marshal: func(v any) ([]byte, byte, error) {
		m := v.(wsMessage)
		return m.data, m.typ, nil
	},
	Unmarshal: func(data []byte, typ byte, v any) error {
		m := v.(*wsMessage)
		m.data, m.typ = data, typ
		return nil
	},
}

// echoWebSocket sends back every message of ws, text as text and binary as
// binary, until the client closes it (echo-basic's /ws).
func echoWebSocket(ws *websocket.Conn) {
	for range maxWebSocketMessages {
		var m wsMessage
		if err := wsRaw.Receive(ws, &m); err != nil {
			return
		}
		if err := wsRaw.Send(ws, m); err != nil {
			return
		}
	}
}

// maxWebSocketMessages bounds one WebSocket's echo loop.
const maxWebSocketMessages = 10000
