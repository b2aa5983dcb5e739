package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"cmp"
	"slices"
)

// affinityLink is a canary backend that takes the affinity of the main
// backend of a Location (affinity-canary-behavior sticky).
type affinityLink struct {
	canary, main int
}

// finishAffinity completes the affinity of the backends out (built from
// used, in the same order), as ingress-nginx does:
//
//   - a cookie without session-cookie-path gets the path of the deciding
//     Ingress's locations to the backend, as that Ingress wrote it (the
//     longest common path, by whole elements, when there are several; "/"
//     when none or when it cannot be a cookie Path); with use-regex the
//     regex is used as written and the Ingress gets ingress-nginx's
//     warning;
//   - a canary backend takes the affinity of the main backend of its
//     Location unless the canary Ingress says affinity-canary-behavior:
//     legacy, so that a client served by the canary stays there.
func (b *builder) finishAffinity(used []*backendState, out []config.Backend) {
	index := make(map[*backendState]int)
	for i := range out {
		if out[i].Affinity != nil {
			index[used[i]] = i
		}
	}
	if len(index) == 0 {
		return
	}
	paths := make(map[int][]string)
	var links []affinityLink
	for _, srv := range b.servers {
		for k := range srv.locations {
			l := &srv.locations[k]
			i, ok := index[l.backend]
			if !ok {
				continue
			}
			if l.entry == used[i].opinions[0] {
				paths[i] = append(paths[i], l.raw)
			}
			if c := l.canary; c != nil && !c.e.Settings.AffinityCanaryLegacy {
				if ci := slices.Index(used, c.be); ci >= 0 {
					links = append(links, affinityLink{canary: ci, main: i})
				}
			}
		}
	}
	for i, be := range used {
		if a := out[i].Affinity; a != nil && a.CookiePath == "" {
			a.CookiePath = b.defaultCookiePath(be.opinions[0], paths[i])
		}
	}
	slices.SortFunc(links, func(x, y affinityLink) int {
		return cmp.Or(cmp.Compare(x.canary, y.canary), cmp.Compare(x.main, y.main))
	})
	for k, l := range links {
		if k > 0 && links[k-1].canary == l.canary {
			continue // the first main backend, by name, decides
		}
		a := *out[l.main].Affinity
		out[l.canary].Affinity = &a
	}
}

// defaultCookiePath is the cookie Path of winner's locations paths.
func (b *builder) defaultCookiePath(winner *intent.Entry, paths []string) string {
	slices.Sort(paths)
	p := commonCookiePath(slices.Compact(paths))
	if !cookiePathOK(p) {
		p = "/"
	}
	if winner.Settings.UseRegex {
		b.entryProblem(winner, "%s should be set when use-regex is true (as ingress-nginx warns): the cookie's Path is %q",
			winner.Setting("session-cookie-path"), p)
	}
	return p
}
