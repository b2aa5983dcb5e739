package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"regexp"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/lua"
)

// entryModule is the one Lua module nginx.conf calls (lua/phases.lua).
const entryModule = "phases"

var (
	// luaRequire matches a require of a literal module name, in any of
	// Lua's call forms; luaRequireAny any use of require.
	luaRequire    = regexp.MustCompile(`\brequire\s*\(?\s*["']([^"']*)["']`)
	luaRequireAny = regexp.MustCompile(`\brequire\b`)
	// luaDirective matches an nginx *_by_lua directive; group 1 is its
	// form ("_block", "_file" or "").
	luaDirective = regexp.MustCompile(`\b[a-z_]+_by_lua(_block|_file)?\b`)
	// entryCall is the whole body of a rendered *_by_lua_block.
	entryCall = regexp.MustCompile(`^require\("` + entryModule + `"\)\.([a-z_]+)\((?s:.*)\)$`)
)

// TestLuaBlocksCallOnlyPhases fails when nginx.conf reaches a Lua module
// other than lua/phases.lua, the entry point of every phase: in the
// template's text (every branch, rendered or not), and in the rendered
// configurations, where each *_by_lua_block (those of view.go's fixed
// locations too) must be one call of a function phases.lua defines.
func TestLuaBlocksCallOnlyPhases(t *testing.T) {
	src, err := lua.Files.ReadFile(entryModule + ".lua")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^function _M\.([a-z_]+)\(`).FindAllStringSubmatch(string(src), -1) {
		defined[m[1]] = true
	}
	for _, m := range luaRequire.FindAllStringSubmatch(confTemplate, -1) {
		if m[1] != entryModule {
			t.Errorf("nginx.conf.tmpl requires %q; call a function of lua/%s.lua instead", m[1], entryModule)
		}
	}
	for _, m := range luaDirective.FindAllStringSubmatch(confTemplate, -1) {
		if m[1] != "_block" {
			t.Errorf("nginx.conf.tmpl has %s: use a *_by_lua_block calling lua/%s.lua", m[0], entryModule)
		}
	}
	calls, reported := map[string]bool{}, map[luaBlock]bool{}
	for name, conf := range luaBlockConfigs(t) {
		for _, b := range luaBlocks(t, name, conf) {
			m := entryCall.FindStringSubmatch(b.body)
			if m != nil && len(luaRequireAny.FindAllString(b.body, -1)) == 1 && defined[m[1]] {
				calls[m[1]] = true
				continue
			}
			if reported[b] {
				continue
			}
			reported[b] = true
			if m == nil || len(luaRequireAny.FindAllString(b.body, -1)) != 1 {
				t.Errorf("%s: %s { %s }: the block must be one call require(%q).<phase>(...)", name, b.directive, b.body, entryModule)
			} else {
				t.Errorf("%s: %s calls %s.%s, which lua/%s.lua does not define", name, b.directive, entryModule, m[1], entryModule)
			}
		}
	}
	// Every phase function is called (a stale one would hide a missing block).
	for fn := range defined {
		if !calls[fn] {
			t.Errorf("lua/%s.lua defines %s, which no rendered nginx.conf calls", entryModule, fn)
		}
	}
}

// luaBlockConfigs renders the golden configurations and one with every
// Lua block the template can have (response header filter, a backend TLS
// profile's upstream and locations, the internal HTTPS server), metrics
// off.
func luaBlockConfigs(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	render := func(name string, opts Options, cfg *config.Configuration) {
		r, err := NewRenderer(opts)
		if err != nil {
			t.Fatal(err)
		}
		conf, err := r.Render(cfg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = string(conf)
	}
	for name, tc := range goldenConfigs() {
		opts := goldenOptions()
		if tc.opts != nil {
			tc.opts(&opts)
		}
		render(name, opts, tc.cfg)
	}
	opts := goldenOptions()
	opts.EnableSSLPassthrough, opts.Metrics.Disabled = true, true
	cfg := &config.Configuration{Checksum: "all"}
	cfg.Global.AddHeaders = "ingress/resp"
	cfg.UpstreamTLS = []config.UpstreamTLS{{Name: "t0123456789abcdef", Protocols: "TLSv1.2 TLSv1.3", Ciphers: "HIGH", VerifyDepth: 1}}
	cfg.Servers = []config.Server{serverOf("waf.test", settingsLoc("/", "app", config.LocationSettings{ModSecurity: &config.ModSecurity{Engine: "On"}}))}
	render("every block", opts, cfg)
	return out
}

type luaBlock struct{ directive, body string }

// luaBlocks returns the *_by_lua_block directives of conf with their
// bodies, trimmed (braces matched: Lua tables in a body are balanced).
func luaBlocks(t *testing.T, name, conf string) []luaBlock {
	t.Helper()
	var out []luaBlock
	for _, loc := range luaDirective.FindAllStringSubmatchIndex(conf, -1) {
		directive := conf[loc[0]:loc[1]]
		if !strings.HasSuffix(directive, "_block") {
			t.Errorf("%s: %s: use a *_by_lua_block calling lua/%s.lua", name, directive, entryModule)
			continue
		}
		rest := conf[loc[1]:]
		open := strings.IndexByte(rest, '{')
		if open < 0 || strings.TrimSpace(rest[:open]) != "" {
			t.Fatalf("%s: %s without a block", name, directive)
		}
		depth, end := 0, -1
		for i := open; i < len(rest) && end < 0; i++ {
			switch rest[i] {
			case '{':
				depth++
			case '}':
				depth--
				if depth == 0 {
					end = i
				}
			}
		}
		if end < 0 {
			t.Fatalf("%s: %s: unbalanced braces", name, directive)
		}
		out = append(out, luaBlock{directive, strings.TrimSpace(rest[open+1 : end])})
	}
	if len(out) == 0 {
		t.Fatalf("%s: no *_by_lua_block found", name)
	}
	return out
}
