package config

import (
	"slices"
	"testing"
)

// TestReloadReasons checks that reload reasons are capped at
// maxReloadReasons, the rest counted.
func TestReloadReasons(t *testing.T) {
	tests := map[string]struct {
		n    int
		want []string
	}{
		"none":     {0, nil},
		"one":      {1, []string{"r0"}},
		"at cap":   {10, []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9"}},
		"over cap": {12, []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "and 2 more"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var r reasons
			for i := range tc.n {
				r.add("r%d", i)
			}
			reload, list := r.result()
			if reload != (tc.n > 0) {
				t.Errorf("reload = %v", reload)
			}
			if !slices.Equal(list, tc.want) {
				t.Errorf("reasons %q, want %q", list, tc.want)
			}
		})
	}
}
