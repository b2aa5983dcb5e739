package harness

import (
	"errors"
	"net/netip"
)

// ErrExhausted: every address of a range is taken.
var ErrExhausted = errors.New("harness: address range exhausted")

// allocator hands out the addresses of a prefix, lowest free first, from
// an offset on, to owners named by a key.
type allocator struct {
	prefix netip.Prefix
	first  netip.Addr
	byKey  map[string]netip.Addr
	taken  map[netip.Addr]string
}

func newAllocator(p netip.Prefix, offset int) *allocator {
	first := p.Masked().Addr()
	for range offset {
		first = first.Next()
	}
	return &allocator{prefix: p, first: first, byKey: map[string]netip.Addr{}, taken: map[netip.Addr]string{}}
}

// get returns key's address, allocating one the first time.
func (a *allocator) get(key string) (netip.Addr, error) {
	if ip, ok := a.byKey[key]; ok {
		return ip, nil
	}
	for ip := a.first; a.prefix.Contains(ip); ip = ip.Next() {
		if _, used := a.taken[ip]; !used && ip.Next().IsValid() && a.prefix.Contains(ip.Next()) {
			a.byKey[key], a.taken[ip] = ip, key
			return ip, nil
		}
	}
	return netip.Addr{}, ErrExhausted
}

// hold records an address chosen elsewhere (a Pod's IPAnnotation).
func (a *allocator) hold(key string, ip netip.Addr) {
	a.release(key)
	a.byKey[key], a.taken[ip] = ip, key
}

// release frees key's address.
func (a *allocator) release(key string) {
	if ip, ok := a.byKey[key]; ok {
		delete(a.byKey, key)
		delete(a.taken, ip)
	}
}

// keep releases every key that live does not hold.
func (a *allocator) keep(live map[string]bool) {
	for k := range a.byKey {
		if !live[k] {
			a.release(k)
		}
	}
}
