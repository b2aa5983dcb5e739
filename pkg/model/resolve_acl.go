package model

import (
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/config"
)

// finishBlock gives every Server the ConfigMap's block lists (one shared
// value: Servers are not modified after Build).
func (b *builder) finishBlock(cfg *config.Configuration) {
	g := &b.global
	if g.BlockUserAgents == "" && g.BlockReferers == "" && g.BlockCIDRs == "" {
		return
	}
	r := &config.BlockRules{UserAgents: splitBlock(g.BlockUserAgents), Referers: splitBlock(g.BlockReferers)}
	if g.BlockCIDRs != "" {
		r.CIDRs = strings.Split(g.BlockCIDRs, ",")
	}
	for i := range cfg.Servers {
		cfg.Servers[i].Block = r
	}
}

func splitBlock(v string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, "\n")
}
