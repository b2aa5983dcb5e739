package world

import (
	"context"
)

// watcherCount is how many watchers the World runs.
func (w *World) watcherCount() int { return max(1, w.opts.Watchers) }

// startWatchers starts the watchers, one per port, in order: watcher-0
// (World.Watcher) first, so that it usually takes the Lease.
func (w *World) startWatchers(ports []int) error {
	for i, port := range ports {
		c := w.newWatcher(i, port)
		w.Watchers = append(w.Watchers, c)
		if i == 0 {
			w.Watcher = c
		}
		if err := c.Start(); err != nil {
			return err
		}
	}
	return nil
}

// startNATS starts the embedded nats-server, or takes the external NATS
// of Options.NATSURL.
func (w *World) startNATS(ctx context.Context) error {
	if w.opts.NATSURL != "" {
		w.NATSURL = w.opts.NATSURL
		return nil
	}
	return w.StartNATS(ctx)
}
