package events

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
	"k8s.io/apimachinery/pkg/runtime"
)

// ContentType is the media type of an encoded Event.
const ContentType = "application/msgpack"

// The keys of the envelope map, in the order Encode writes them. The
// schema version comes first so that a decoder can refuse a newer envelope
// before it reads anything whose shape may have changed.
const (
	keySchemaVersion   = "schemaVersion"
	keyOp              = "op"
	keyKind            = "kind"
	keyNamespace       = "namespace"
	keyName            = "name"
	keyUID             = "uid"
	keyResourceVersion = "resourceVersion"
	keyObservedAt      = "observedAt"
	keyWatcherID       = "watcherId"
	keyObject          = "object"
)

// Encode serializes ev as a msgpack map of the envelope fields (lowerCamel
// keys, empty fields left out) whose "object" value is the Kubernetes
// object encoded with its json field names. Map keys are sorted, so equal
// events encode to equal bytes. Encode writes this build's SchemaVersion,
// whatever ev.SchemaVersion says, and ignores the consumer-side fields
// Sequence, Subject and PublishedAt. An event that fails Validate is an
// error wrapping ErrInvalidEvent.
func Encode(ev Event) ([]byte, error) {
	if err := ev.Validate(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(512)
	if err := encodeEnvelope(newEncoder(&buf), ev); err != nil {
		return nil, fmt.Errorf("events: encode %s %s: %w", ev.Kind, ev.Key(), err)
	}
	return buf.Bytes(), nil
}

// newEncoder is the one encoder configuration of the wire format.
func newEncoder(w io.Writer) *msgpack.Encoder {
	enc := msgpack.NewEncoder(w)
	enc.SetCustomStructTag("json")
	enc.SetOmitEmpty(true)
	enc.SetSortMapKeys(true)
	return enc
}

// newDecoder is the decoder matching newEncoder.
func newDecoder(r io.Reader) *msgpack.Decoder {
	dec := msgpack.NewDecoder(r)
	dec.SetCustomStructTag("json")
	return dec
}

// envelopeStrings are the optional string fields of ev, in wire order.
func envelopeStrings(ev Event) [5][2]string {
	return [5][2]string{
		{keyNamespace, ev.Namespace},
		{keyName, ev.Name},
		{keyUID, ev.UID},
		{keyResourceVersion, ev.ResourceVersion},
		{keyWatcherID, ev.WatcherID},
	}
}

func encodeEnvelope(enc *msgpack.Encoder, ev Event) error {
	strs := envelopeStrings(ev)
	hasObject := !isNil(ev.Object)
	n := 3 // schemaVersion, op, kind
	for _, kv := range strs {
		if kv[1] != "" {
			n++
		}
	}
	if !ev.ObservedAt.IsZero() {
		n++
	}
	if hasObject {
		n++
	}
	w := mapWriter{enc: enc}
	w.header(n)
	w.int(keySchemaVersion, SchemaVersion)
	w.str(keyOp, string(ev.Op))
	w.str(keyKind, string(ev.Kind))
	for _, kv := range strs[:4] {
		w.str(kv[0], kv[1])
	}
	w.time(keyObservedAt, ev.ObservedAt)
	w.str(strs[4][0], strs[4][1])
	if hasObject {
		w.value(keyObject, wireObject(ev.Object))
	}
	return w.err
}

// mapWriter writes map entries and keeps the first error.
type mapWriter struct {
	enc *msgpack.Encoder
	err error
}

func (w *mapWriter) header(n int) {
	w.err = w.enc.EncodeMapLen(n)
}

func (w *mapWriter) key(k string) bool {
	if w.err == nil {
		w.err = w.enc.EncodeString(k)
	}
	return w.err == nil
}

func (w *mapWriter) str(k, v string) {
	if v != "" && w.key(k) {
		w.err = w.enc.EncodeString(v)
	}
}

func (w *mapWriter) int(k string, v int) {
	if w.key(k) {
		w.err = w.enc.EncodeInt(int64(v))
	}
}

func (w *mapWriter) time(k string, v time.Time) {
	if !v.IsZero() && w.key(k) {
		w.err = w.enc.EncodeTime(v)
	}
}

func (w *mapWriter) value(k string, v any) {
	if w.key(k) {
		w.err = w.enc.Encode(v)
	}
}

// Decode parses a payload written by Encode. It never panics: a payload that
// is not a well-formed envelope of a known kind, whose object does not match
// the envelope, or that has trailing bytes is an error wrapping
// ErrMalformed; an envelope of a newer schema is an error wrapping
// ErrSchemaVersion. Unknown envelope keys and object fields are skipped, so
// older decoders read newer envelopes of the same schema version.
func Decode(data []byte) (ev Event, err error) {
	defer func() {
		if r := recover(); r != nil {
			ev, err = Event{}, fmt.Errorf("%w: decoder panic: %v", ErrMalformed, r)
		}
	}()
	if err := wellFormed(data); err != nil {
		return Event{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	ev, err = decodeEnvelope(newDecoder(bytes.NewReader(data)))
	if err != nil {
		return Event{}, err
	}
	if err := ev.validateIdentity(); err != nil {
		return Event{}, fmt.Errorf("%w: %s %s: %w", ErrMalformed, ev.Kind, ev.Key(), err)
	}
	return ev, nil
}

func decodeEnvelope(dec *msgpack.Decoder) (Event, error) {
	n, err := dec.DecodeMapLen()
	if err != nil || n < 0 {
		return Event{}, fmt.Errorf("%w: envelope is not a map", ErrMalformed)
	}
	var ev Event
	var raw msgpack.RawMessage // an object that came before its kind
	for range n {
		key, err := dec.DecodeString()
		if err == nil {
			err = decodeField(dec, key, &ev, &raw)
		}
		if err != nil {
			return Event{}, envelopeError(key, err)
		}
	}
	if ev.SchemaVersion < 1 {
		return Event{}, fmt.Errorf("%w: no schema version", ErrMalformed)
	}
	if raw != nil {
		obj, err := decodeObject(newDecoder(bytes.NewReader(raw)), ev.Kind)
		if err != nil {
			return Event{}, envelopeError(keyObject, err)
		}
		ev.Object = obj
	}
	return ev, nil
}

// envelopeError wraps a field error as malformed, unless it already is a
// sentinel of this package.
func envelopeError(key string, err error) error {
	if isSentinel(err) {
		return err
	}
	return fmt.Errorf("%w: field %q: %w", ErrMalformed, key, err)
}

func decodeField(dec *msgpack.Decoder, key string, ev *Event, raw *msgpack.RawMessage) error {
	var err error
	switch key {
	case keySchemaVersion:
		ev.SchemaVersion, err = decodeSchemaVersion(dec)
	case keyOp:
		err = decodeString(dec, (*string)(&ev.Op))
	case keyKind:
		err = decodeString(dec, (*string)(&ev.Kind))
	case keyNamespace:
		err = decodeString(dec, &ev.Namespace)
	case keyName:
		err = decodeString(dec, &ev.Name)
	case keyUID:
		err = decodeString(dec, &ev.UID)
	case keyResourceVersion:
		err = decodeString(dec, &ev.ResourceVersion)
	case keyWatcherID:
		err = decodeString(dec, &ev.WatcherID)
	case keyObservedAt:
		ev.ObservedAt, err = dec.DecodeTime()
	case keyObject:
		err = decodeObjectField(dec, ev, raw)
	default:
		err = dec.Skip()
	}
	return err
}

func decodeString(dec *msgpack.Decoder, dst *string) (err error) {
	*dst, err = dec.DecodeString()
	return err
}

func decodeSchemaVersion(dec *msgpack.Decoder) (int, error) {
	v, err := dec.DecodeInt64()
	switch {
	case err != nil:
		return 0, err
	case v > SchemaVersion:
		return 0, fmt.Errorf("%w: envelope version %d, this build reads up to %d", ErrSchemaVersion, v, SchemaVersion)
	case v < 1:
		return 0, fmt.Errorf("%w: schema version %d", ErrMalformed, v)
	}
	return int(v), nil
}

// decodeObjectField decodes the object directly when the kind is known, and
// keeps its raw bytes for later otherwise.
func decodeObjectField(dec *msgpack.Decoder, ev *Event, raw *msgpack.RawMessage) error {
	if newObject(ev.Kind) == nil {
		var err error
		*raw, err = dec.DecodeRaw()
		return err
	}
	obj, err := decodeObject(dec, ev.Kind)
	ev.Object = obj
	return err
}

// decodeObject decodes the typed object of kind k; a msgpack nil is no
// object.
func decodeObject(dec *msgpack.Decoder, k Kind) (runtime.Object, error) {
	obj := newObject(k)
	if obj == nil {
		return nil, fmt.Errorf("%w: unknown kind %q", ErrMalformed, k)
	}
	if c, err := dec.PeekCode(); err == nil && c == msgpcode.Nil {
		return nil, dec.DecodeNil()
	}
	if err := dec.Decode(obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// isSentinel reports whether err already wraps one of the decode sentinels.
func isSentinel(err error) bool {
	return errors.Is(err, ErrMalformed) || errors.Is(err, ErrSchemaVersion)
}
