package events

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// maxNesting bounds how deeply arrays and maps may nest in a payload.
// Kubernetes objects nest about a dozen levels; the bound keeps recursive
// decoding of hostile input shallow.
const maxNesting = 64

var errTruncated = errors.New("truncated msgpack value")

// wellFormed checks, without allocating, that b holds exactly one complete
// msgpack value, nested at most maxNesting deep, in which every declared
// length fits in the bytes that follow it.
//
// The reflection decoder of msgpack/v5 allocates a slice of the declared
// length before it reads the elements; checking lengths against the input
// first bounds what a hostile payload of a few bytes can make it allocate.
func wellFormed(b []byte) error {
	var stack [maxNesting + 1]int // values still to read at each level
	depth := 0
	stack[0] = 1
	for depth >= 0 {
		if stack[depth] == 0 {
			depth--
			continue
		}
		stack[depth]--
		size, children, err := msgpackHead(b)
		if err != nil {
			return err
		}
		b = b[size:]
		if children == 0 {
			continue
		}
		if children > len(b) {
			return fmt.Errorf("container of %d values in %d bytes: %w", children, len(b), errTruncated)
		}
		if depth == maxNesting {
			return fmt.Errorf("nested deeper than %d levels", maxNesting)
		}
		depth++
		stack[depth] = children
	}
	if len(b) != 0 {
		return fmt.Errorf("%d trailing bytes", len(b))
	}
	return nil
}

// msgpackHead reads the value starting b. It returns the bytes the value
// takes without its nested values (header and, for scalars, payload) and
// how many nested values follow (array elements, map keys and values).
func msgpackHead(b []byte) (size, children int, err error) {
	if len(b) == 0 {
		return 0, 0, errTruncated
	}
	c := b[0]
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		return 1, 0, nil // fixint, nil, bool
	case c <= 0x8f:
		return 1, 2 * int(c&0x0f), nil // fixmap
	case c <= 0x9f:
		return 1, int(c & 0x0f), nil // fixarray
	case c <= 0xbf:
		return sized(b, 1, int(c&0x1f)) // fixstr
	}
	return msgpackHeadTyped(b)
}

// msgpackHeadTyped handles the codes 0xc1..0xdf.
func msgpackHeadTyped(b []byte) (size, children int, err error) {
	switch c := b[0]; c {
	case 0xc4, 0xd9: // bin8, str8
		return lengthPrefixed(b, 1, 0)
	case 0xc5, 0xda: // bin16, str16
		return lengthPrefixed(b, 2, 0)
	case 0xc6, 0xdb: // bin32, str32
		return lengthPrefixed(b, 4, 0)
	case 0xc7, 0xc8, 0xc9: // ext8, ext16, ext32: length, type byte, data
		return lengthPrefixed(b, 1<<(c-0xc7), 1)
	case 0xca, 0xce, 0xd2: // float32, uint32, int32
		return sized(b, 1, 4)
	case 0xcb, 0xcf, 0xd3: // float64, uint64, int64
		return sized(b, 1, 8)
	case 0xcc, 0xd0: // uint8, int8
		return sized(b, 1, 1)
	case 0xcd, 0xd1: // uint16, int16
		return sized(b, 1, 2)
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16 with type byte
		return sized(b, 2, 1<<(c-0xd4))
	case 0xdc, 0xde: // array16, map16
		return container(b, 2, c == 0xde)
	case 0xdd, 0xdf: // array32, map32
		return container(b, 4, c == 0xdf)
	}
	return 0, 0, fmt.Errorf("invalid msgpack code 0x%02x", b[0])
}

// sized is a value of a fixed header and n bytes of payload.
func sized(b []byte, header, n int) (int, int, error) {
	if header+n > len(b) {
		return 0, 0, errTruncated
	}
	return header + n, 0, nil
}

// lengthPrefixed is a code, a big-endian length of lenBytes bytes, extra
// bytes (the ext type) and that many bytes of payload.
func lengthPrefixed(b []byte, lenBytes, extra int) (int, int, error) {
	n, ok := readLength(b, lenBytes)
	if !ok {
		return 0, 0, errTruncated
	}
	return sized(b, 1+lenBytes+extra, n)
}

// container is an array or map header with a big-endian count.
func container(b []byte, lenBytes int, isMap bool) (int, int, error) {
	n, ok := readLength(b, lenBytes)
	if !ok {
		return 0, 0, errTruncated
	}
	if isMap {
		n *= 2
	}
	return 1 + lenBytes, n, nil
}

// readLength reads the big-endian length of lenBytes bytes after the code.
func readLength(b []byte, lenBytes int) (int, bool) {
	if len(b) < 1+lenBytes {
		return 0, false
	}
	switch lenBytes {
	case 1:
		return int(b[1]), true
	case 2:
		return int(binary.BigEndian.Uint16(b[1:])), true
	default:
		return int(binary.BigEndian.Uint32(b[1:])), true
	}
}
