package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"errors"
	"testing"
)

func TestValidators(t *testing.T) {
	tests := []struct {
		name    string
		fn      func(string) (string, error)
		in      string
		want    string
		wantErr bool
	}{
		{"size plain", sizeOf, "0", "0", false},
		{"size upper unit", sizeOf, "16M", "16m", false},
		{"size with space", sizeOf, "1 m", "", true},
		{"size with semicolon", sizeOf, "1m;", "", true},
		{"size too long", sizeOf, "99999999999m", "", true},
		{"size with unit word", sizeOf, "1mb", "", true},
		{"size with brace", sizeOf, "1m}", "", true},
		{"size negative", sizeOf, "-1", "", true},
		{"file path", filePath, "/var/lib/x-y_z.1", "/var/lib/x-y_z.1", false},
		{"file path with space", filePath, "/var/lib/a b", "", true},
		{"file path with semicolon", filePath, "/var;", "", true},
		{"file path relative", filePath, "var/lib", "", true},
		{"file path with newline", filePath, "/var\n", "", true},
		{"file path with dollar", filePath, "/var/$x", "", true},
		{"gzip types", gzipTypes, "text/css application/json", "text/css application/json", false},
		{"gzip types star", gzipTypes, "*", "*", false},
		{"gzip types with a directive", gzipTypes, "text/css; gzip off", "", true},
		{"gzip types double space", gzipTypes, "text/css  text/plain", "", true},
		{"ssl protocols", sslProtocols, "TLSv1.2 TLSv1.3", "TLSv1.2 TLSv1.3", false},
		{"ssl protocols SSLv3", sslProtocols, "SSLv3", "", true},
		{"ssl ciphers", cipherList, "ECDHE+AESGCM:!aNULL:@STRENGTH", "ECDHE+AESGCM:!aNULL:@STRENGTH", false},
		{"ssl ciphers with a quote", cipherList, "HIGH';", "", true},
		{"log format escaped", logFormatOf, `$status 'a' \b`, `'$status \'a\' \\b'`, false},
		{"log format braces", logFormatOf, `{"s": "${status}"}`, `'{"s": "${status}"}'`, false},
		{"log format literal dollar", logFormatOf, "$ 5", "", true},
		{"log format upper-case name", logFormatOf, "$statusX", "", true},
		{"log format newline", logFormatOf, "$status\n", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.fn(tc.in)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalidValue) {
					t.Fatalf("(%q) = %q, %v; want ErrInvalidValue", tc.in, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func sizeOf(s string) (string, error) { return nginxSize(config.Size(s)) }

func logFormatOf(s string) (string, error) { return logFormat(s, "") }

func TestSeconds(t *testing.T) {
	for _, n := range []int{0, -1, maxSeconds + 1} {
		if _, err := seconds(n); !errors.Is(err, ErrInvalidValue) {
			t.Errorf("seconds(%d) = %v, want ErrInvalidValue", n, err)
		}
	}
	if s, err := seconds(90); err != nil || s != "90s" {
		t.Errorf("seconds(90) = %q, %v", s, err)
	}
}

func TestLuaString(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "ns/cert-1", `"ns/cert-1"`},
		{"quote and brace", `a"}`, `"a\034\125"`},
		{"newline and semicolon", "a\n;", `"a\010\059"`},
		{"dollar and backslash", `$\`, `"\036\092"`},
		{"long bracket", "]]", `"\093\093"`},
		{"empty", "", `""`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := luaString(tc.in); got != tc.want {
				t.Errorf("luaString(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

// gzipTypes is mimeTypes for gzip-types.
func gzipTypes(s string) (string, error) { return mimeTypes("gzip types", s) }
