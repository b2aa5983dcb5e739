package model

import (
	"cmp"
	"slices"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// buildListeners collects the ports the sources' objects make nginx
// listen on (intent.ListenerSource: a Gateway listener's port of the
// fleet), each checked once by config.ValidListenerPort against nginx's
// and the syncer's own ports and those of the TCP and UDP services. A port
// claimed twice (two Gateways given one port, or an HTTP and an HTTPS
// listener) is kept by the first in Origin order. A rule on a port that is
// not kept is left out (buildRule).
func (b *builder) buildListeners() {
	var all []intent.Listener
	for _, src := range b.s.sources {
		if ls, ok := src.(intent.ListenerSource); ok {
			all = append(all, ls.Listeners()...)
		}
	}
	slices.SortFunc(all, func(x, y intent.Listener) int {
		return cmp.Or(cmp.Compare(x.Port, y.Port), cmp.Compare(x.Origin.Namespace, y.Origin.Namespace),
			cmp.Compare(x.Origin.Name, y.Origin.Name), boolCompare(x.TLS, y.TLS))
	})
	reserved := append(slices.Clone(b.opts.ReservedPorts), b.l4Ports()...)
	b.listeners = map[int]bool{}
	b.listenerList = nil
	var first intent.Origin
	for _, l := range all {
		o := l.Origin
		if err := config.ValidListenerPort(l.Port, reserved); err != nil {
			b.problem(o.Kind, o.Namespace, o.Name, "listener port of the fleet: %v; its listeners on it are not served", err)
			continue
		}
		if b.listeners[l.Port] {
			if first != o || b.listenerList[len(b.listenerList)-1].TLS != l.TLS {
				b.problem(o.Kind, o.Namespace, o.Name, "listener port of the fleet %d is %s %s/%s's; its listeners on it are not served", l.Port, first.Kind, first.Namespace, first.Name)
			}
			continue
		}
		b.listeners[l.Port], first = true, o
		b.listenerList = append(b.listenerList, config.Listener{Port: l.Port, TLS: l.TLS, H2C: l.H2C && !l.TLS, Gateway: o.Namespace + "/" + o.Name})
	}
}

// l4Ports are the ports of the TCP and UDP services ConfigMaps' entries.
func (b *builder) l4Ports() []int {
	var out []int
	for _, src := range l4Sources(b.opts) {
		k, err := intent.ParseKey(src.ref)
		if src.ref == "" || err != nil {
			continue
		}
		if cm := b.s.ConfigMap(k.Namespace, k.Name); cm != nil {
			for port := range cm.Data {
				if p, err := parseL4Port(port); err == nil {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

func boolCompare(x, y bool) int { return cmp.Compare(boolInt(x), boolInt(y)) }

func boolInt(v bool) int {
	if v {
		return 1
	}
	return 0
}
