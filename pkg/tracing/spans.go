package tracing

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strconv"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// ErrSpanLine is the error of a line of GET /ingress_traces that is not a
// span.
var ErrSpanLine = errors.New("malformed span line")

// The fields of a span line (lua/tracing.lua's header).
const (
	fTrace = iota
	fSpan
	fParent
	fName
	fServerName
	fStart
	fEnd
	fMethod
	fFlavor
	fTarget
	fHost
	fUserAgent
	fStatus
	fScheme
	fServerPort
	fPeerIP
	fPeerPort
	numFields
)

// Batch is one read of GET /ingress_traces.
type Batch struct {
	Spans []*tracepb.Span
	// Dropped counts the spans nginx dropped since the last read.
	Dropped int
	// Malformed counts the lines that were not spans (skipped).
	Malformed int
}

// ParseSpans reads the body of GET /ingress_traces.
func ParseSpans(data []byte) Batch {
	var b Batch
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte{'\n'})
		if len(line) == 0 {
			continue
		}
		if n, ok := bytes.CutPrefix(line, []byte("#d\t")); ok {
			d, _ := strconv.Atoi(string(n))
			b.Dropped += d
			continue
		}
		s, err := parseSpan(line)
		if err != nil {
			b.Malformed++
			continue
		}
		b.Spans = append(b.Spans, s)
	}
	return b
}

// parseSpan converts one span line into an OTLP server span with the
// nginx module's attributes.
func parseSpan(line []byte) (*tracepb.Span, error) {
	f := bytes.Split(line, []byte{'\t'})
	if len(f) != numFields {
		return nil, ErrSpanLine
	}
	trace, err1 := hexID(f[fTrace], 16)
	span, err2 := hexID(f[fSpan], 8)
	start, err3 := unixNano(f[fStart])
	end, err4 := unixNano(f[fEnd])
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return nil, err
	}
	s := &tracepb.Span{
		TraceId: trace, SpanId: span, Name: string(f[fName]), Kind: tracepb.Span_SPAN_KIND_SERVER,
		StartTimeUnixNano: start, EndTimeUnixNano: max(end, start),
	}
	if len(f[fParent]) > 0 {
		p, err := hexID(f[fParent], 8)
		if err != nil {
			return nil, err
		}
		s.ParentSpanId = p
	}
	s.Attributes = attributes(f)
	return s, nil
}

// attributes are the module's: the request's at its start, the status
// and the script attributes (scheme, ports, peer) at its end.
func attributes(f [][]byte) []*commonpb.KeyValue {
	kv := []*commonpb.KeyValue{
		str("http.method", f[fMethod]), str("http.flavor", f[fFlavor]), str("http.target", f[fTarget]),
	}
	for _, a := range []struct {
		key string
		v   []byte
	}{{"http.server_name", f[fServerName]}, {"http.host", f[fHost]}, {"http.user_agent", f[fUserAgent]}} {
		if len(a.v) > 0 {
			kv = append(kv, str(a.key, a.v))
		}
	}
	kv = append(kv, integer("http.status_code", f[fStatus]), str("http.scheme", f[fScheme]),
		integer("net.host.port", f[fServerPort]), str("net.peer.ip", f[fPeerIP]), integer("net.peer.port", f[fPeerPort]))
	return kv
}

func str(k string, v []byte) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: string(v)}}}
}

func integer(k string, v []byte) *commonpb.KeyValue {
	n, _ := strconv.ParseInt(string(v), 10, 64)
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: n}}}
}

func hexID(v []byte, n int) ([]byte, error) {
	if len(v) != 2*n {
		return nil, ErrSpanLine
	}
	id := make([]byte, n)
	if _, err := hex.Decode(id, v); err != nil {
		return nil, ErrSpanLine
	}
	return id, nil
}

// unixNano converts nginx's seconds with milliseconds.
func unixNano(v []byte) (uint64, error) {
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f < 0 {
		return 0, ErrSpanLine
	}
	return uint64(f*1000+0.5) * 1_000_000, nil
}
