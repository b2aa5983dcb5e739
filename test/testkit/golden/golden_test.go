package golden

import (
	"testing"
)

func TestFirstDiff(t *testing.T) {
	cases := []struct {
		name, want, got, out string
	}{
		{"equal", "a\nb", "a\nb", ""},
		{"second line", "a\nb", "a\nc", "line 2:\n  want \"b\"\n  got  \"c\""},
		{"got longer", "a", "a\nx", "line 2:\n  want \"\"\n  got  \"x\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if out := FirstDiff(tc.want, tc.got); out != tc.out {
				t.Fatalf("FirstDiff = %q, want %q", out, tc.out)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	Check(t, "sample", []byte("line one\nline two\n"), "")
	ft := &fakeT{TB: t}
	Check(ft, "sample", []byte("line one\nline 2\n"), "a hint")
	if !ft.failed {
		t.Fatal("a differing output did not fail")
	}
}

type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) Helper()               {}
