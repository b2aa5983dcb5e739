package events

import (
	"slices"

	"github.com/vmihailenco/msgpack/v5"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// msgpack's SetSortMapKeys sorts map[string]string but writes other maps,
// such as a Secret's map[string][]byte, in Go's random map order: equal
// Secrets would encode to different bytes. wireObject swaps such objects for
// a shadow with the same field names whose byte maps encode sorted; Decode
// reads the shadow back into the real type, so the wire format is unchanged.
func wireObject(obj runtime.Object) any {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return obj
	}
	return &secretWire{TypeMeta: s.TypeMeta, ObjectMeta: s.ObjectMeta, Immutable: s.Immutable,
		Data: sortedBytes(s.Data), StringData: s.StringData, Type: s.Type}
}

// secretWire mirrors corev1.Secret field by field, with the same tags.
type secretWire struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Immutable         *bool             `json:"immutable,omitempty"`
	Data              sortedBytes       `json:"data,omitempty"`
	StringData        map[string]string `json:"stringData,omitempty"`
	Type              corev1.SecretType `json:"type,omitempty"`
}

// sortedBytes is a map[string][]byte that encodes in key order.
type sortedBytes map[string][]byte

var _ msgpack.CustomEncoder = sortedBytes(nil)

// EncodeMsgpack writes the map with its keys sorted.
func (m sortedBytes) EncodeMsgpack(enc *msgpack.Encoder) error {
	if m == nil {
		return enc.EncodeNil()
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if err := enc.EncodeMapLen(len(keys)); err != nil {
		return err
	}
	for _, k := range keys {
		if err := enc.EncodeString(k); err != nil {
			return err
		}
		if err := enc.EncodeBytes(m[k]); err != nil {
			return err
		}
	}
	return nil
}
