package lua

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// uncompilable are the ngx APIs whose resty.core functions the LuaJIT of the
// data plane cannot compile a trace through (see nvar.lua): request code
// reads variables and clocks through nvar.lua instead.
var uncompilable = regexp.MustCompile(`\bngx\.var\b|\bngx\.now\b|\bngx\.time\b|\bngx\.req\.start_time\b`)

// TestRequestCodeUsesNvar checks every module but nvar.lua for the APIs of
// uncompilable, comments left out.
func TestRequestCodeUsesNvar(t *testing.T) {
	for _, name := range moduleFiles(t) {
		if name == "nvar.lua" {
			continue
		}
		data, err := fs.ReadFile(Files, name)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			code, _, _ := strings.Cut(line, "--")
			if m := uncompilable.FindString(code); m != "" {
				t.Errorf("%s:%d uses %s; use nvar.lua (get, set, now, time, start_time)", name, i+1, m)
			}
		}
	}
}

func TestUncompilableMatches(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{`local h = ngx.var.host`, true},
		{`local v = ngx.var[name]`, true},
		{`local now = ngx.now()`, true},
		{`local t = ngx.time()`, true},
		{`local s = ngx.req.start_time()`, true},
		{`local h = var_get("host")`, false},
		{`local now = nvar.now()`, false},
		{`ngx.req.set_header("X", v)`, false},
	} {
		if got := uncompilable.MatchString(tc.line); got != tc.want {
			t.Errorf("%q: matched %v, want %v", tc.line, got, tc.want)
		}
	}
}
