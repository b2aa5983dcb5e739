package tracing

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// ErrSpanLine is the error of a span of GET /ingress_traces that does not
// have its fields.
var ErrSpanLine = errors.New("malformed span")

// The fields of a span (lua/tracing.lua's header).
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
	// Malformed counts the spans skipped for the wrong number of fields
	// or an invalid id or time.
	Malformed int
}

// Separators of GET /ingress_traces: fields are separated by NUL, and a
// field "\n" ends each span.
var (
	fieldSep = []byte{0}
	spanEnd  = []byte{'\n'}
)

// ParseSpans reads the body of GET /ingress_traces: a first line
// "#d\t<dropped>", then the fields of the spans (lua/tracing.lua).
func ParseSpans(data []byte) Batch {
	var b Batch
	if rest, ok := bytes.CutPrefix(data, []byte("#d\t")); ok {
		var n []byte
		n, data, _ = bytes.Cut(rest, spanEnd)
		b.Dropped, _ = strconv.Atoi(string(n))
	}
	f := make([][]byte, 0, numFields)
	p := &parser{seen: map[string]string{}}
	for len(data) > 0 {
		var field []byte
		field, data, _ = bytes.Cut(data, fieldSep)
		if !bytes.Equal(field, spanEnd) {
			f = append(f, field)
			continue
		}
		if s, err := p.span(f); err == nil {
			b.Spans = append(b.Spans, s)
		} else {
			b.Malformed++
		}
		f = f[:0]
	}
	if len(f) > 0 {
		b.Malformed++ // a span without its end
	}
	return b
}

// span converts the fields of one span into an OTLP server span with the
// nginx module's attributes.
func (p *parser) span(f [][]byte) (*tracepb.Span, error) {
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
		TraceId: trace, SpanId: span, Name: p.text(f[fName]), Kind: tracepb.Span_SPAN_KIND_SERVER,
		StartTimeUnixNano: start, EndTimeUnixNano: max(end, start),
	}
	if len(f[fParent]) > 0 {
		p, err := hexID(f[fParent], 8)
		if err != nil {
			return nil, err
		}
		s.ParentSpanId = p
	}
	s.Attributes = p.attributes(f)
	return s, nil
}

// maxAttrs bounds the attributes of a span: 9 strings and 3 integers.
const maxAttrs = 12

// attrSlab holds the attributes of one span, allocated at once instead of
// three allocations an attribute.
type attrSlab struct {
	ptrs    [maxAttrs]*commonpb.KeyValue
	kvs     [maxAttrs]commonpb.KeyValue
	avs     [maxAttrs]commonpb.AnyValue
	strs    [maxAttrs - 3]commonpb.AnyValue_StringValue
	ints    [3]commonpb.AnyValue_IntValue
	n, s, i int
}

// add adds the attribute key whose value str or integer set in a.avs[a.n].
func (a *attrSlab) add(key string) {
	a.kvs[a.n].Key, a.kvs[a.n].Value = key, &a.avs[a.n]
	a.ptrs[a.n] = &a.kvs[a.n]
	a.n++
}

func (a *attrSlab) str(key, v string) {
	a.strs[a.s].StringValue = v
	a.avs[a.n].Value = &a.strs[a.s]
	a.s++
	a.add(key)
}

func (a *attrSlab) integer(key string, v []byte) {
	a.ints[a.i].IntValue, _ = strconv.ParseInt(string(v), 10, 64)
	a.avs[a.n].Value = &a.ints[a.i]
	a.i++
	a.add(key)
}

// attributes are the module's: the request's at its start, the status
// and the script attributes (scheme, ports, peer) at its end.
func (p *parser) attributes(f [][]byte) []*commonpb.KeyValue {
	a := new(attrSlab)
	a.str("http.method", p.text(f[fMethod]))
	a.str("http.flavor", p.text(f[fFlavor]))
	a.str("http.target", text(f[fTarget]))
	for _, o := range [...]struct {
		key string
		i   int
	}{{"http.server_name", fServerName}, {"http.host", fHost}, {"http.user_agent", fUserAgent}} {
		if len(f[o.i]) > 0 {
			a.str(o.key, p.text(f[o.i]))
		}
	}
	a.integer("http.status_code", f[fStatus])
	a.str("http.scheme", p.text(f[fScheme]))
	a.integer("net.host.port", f[fServerPort])
	a.str("net.peer.ip", p.text(f[fPeerIP]))
	a.integer("net.peer.port", f[fPeerPort])
	return a.ptrs[:a.n]
}

// parser shares the values that repeat in one read (methods, hosts, user
// agents, client addresses) instead of a string each span.
type parser struct{ seen map[string]string }

// maxSeen bounds parser.seen.
const maxSeen = 4096

func (p *parser) text(v []byte) string {
	if s, ok := p.seen[string(v)]; ok {
		return s
	}
	s := text(v)
	if len(p.seen) < maxSeen {
		p.seen[string(v)] = s
	}
	return s
}

func str(k string, v []byte) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: text(v)}}}
}

// text is v as a protobuf string: valid UTF-8 (an invalid sequence
// becomes U+FFFD, or the export of the whole batch would fail) without
// control characters (each becomes "?"), as the client sent them in the
// request line or a header.
func text(v []byte) string {
	if utf8.Valid(v) && bytes.IndexFunc(v, unicode.IsControl) < 0 {
		return string(v)
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(string(v), "\uFFFD"))
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
