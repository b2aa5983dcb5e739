package events

import (
	"bytes"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// TestWellFormed checks the structural check on every msgpack type, whole
// and cut short by one byte.
func TestWellFormed(t *testing.T) {
	values := map[string]any{
		"fixint": 5, "negint": -3, "int8": -100, "int16": -1000, "int32": -100000, "int64": -1 << 40,
		"uint8": 200, "uint16": 60000, "uint32": 1 << 20, "uint64": uint64(1) << 40,
		"float32": float32(1.5), "float64": 2.5, "nil": nil, "true": true, "false": false,
		"fixstr": "abc", "str8": string(bytes.Repeat([]byte("x"), 40)), "str16": string(bytes.Repeat([]byte("x"), 300)),
		"bin8": []byte{1, 2, 3}, "bin16": bytes.Repeat([]byte{1}, 300),
		"fixarray": []int{1, 2}, "array16": make([]int, 20), "fixmap": map[string]int{"a": 1},
		"map16": func() map[int]int {
			m := map[int]int{}
			for i := range 20 {
				m[i] = i
			}
			return m
		}(),
		"time": time.Unix(1_767_225_600, 5), "time96": time.Unix(1<<35, 5),
		"nested": map[string]any{"a": []any{1, "b", map[string]any{"c": nil}}},
	}
	for name, v := range values {
		t.Run(name, func(t *testing.T) {
			data, err := msgpack.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if err := wellFormed(data); err != nil {
				t.Errorf("wellFormed(%x) = %v", data, err)
			}
			if err := wellFormed(data[:len(data)-1]); err == nil {
				t.Errorf("wellFormed accepts %x cut short", data)
			}
			if err := wellFormed(append(data, 0xc0)); err == nil {
				t.Errorf("wellFormed accepts %x with a trailing byte", data)
			}
		})
	}
}

func TestWellFormedLimits(t *testing.T) {
	deep := append(bytes.Repeat([]byte{0x91}, maxNesting+1), 0xc0)
	if err := wellFormed(deep); err == nil {
		t.Error("wellFormed accepts nesting deeper than maxNesting")
	}
	ok := append(bytes.Repeat([]byte{0x91}, maxNesting), 0xc0)
	if err := wellFormed(ok); err != nil {
		t.Errorf("wellFormed refuses nesting of maxNesting: %v", err)
	}
	for _, data := range [][]byte{
		{0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0}, // array32 claiming 4G elements
		{0xdf, 0x00, 0x01, 0x00, 0x00, 0xc0}, // map32 claiming 64K pairs
		{0xc6, 0xff, 0xff, 0xff, 0xff},       // bin32 claiming 4 GiB
		{0xc9, 0x00, 0x00, 0x00, 0x10, 0x01}, // ext32 longer than the input
		{0xc1},                               // never used
	} {
		if err := wellFormed(data); err == nil {
			t.Errorf("wellFormed accepts %x", data)
		}
	}
}
