package nginx

import (
	"errors"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/model"
)

func TestValidators(t *testing.T) {
	tests := []struct {
		name    string
		fn      func(string) (string, error)
		in      string
		want    string
		wantErr bool
	}{
		{"server name exact", serverName, "a.example.com", "a.example.com", false},
		{"server name default", serverName, "_", "_", false},
		{"server name wildcard is a one-label regex", serverName, "*.example.com", `"~^[^.]+\.example\.com$"`, false},
		{"server name wildcard alone", serverName, "*", "", true},
		{"server name double wildcard", serverName, "*.*.example.com", "", true},
		{"server name trailing dot", serverName, "example.com.", "", true},
		{"server name label too long", serverName, strings.Repeat("a", 64) + ".com", "", true},
		{"server name injection", serverName, "a.com; return 200", "", true},
		{"path root", locationPath, "/", "/", false},
		{"path with allowed punctuation", locationPath, "/a-b_c.d~e/%20/f:g@h", "/a-b_c.d~e/%20/f:g@h", false},
		{"path with semicolon", locationPath, "/a;b", "", true},
		{"path with braces", locationPath, "/a{1}", "", true},
		{"path with dollar", locationPath, "/$host", "", true},
		{"path with newline", locationPath, "/a\nb", "", true},
		{"path with quote", locationPath, "/a\"b", "", true},
		{"path with backslash", locationPath, `/a\b`, "", true},
		{"backend", backendName, "ns-svc-http", "ns-svc-http", false},
		{"backend with quote", backendName, `x"`, "", true},
		{"backend empty", backendName, "", "", true},
		{"size plain", sizeOf, "0", "0", false},
		{"size upper unit", sizeOf, "16M", "16m", false},
		{"size with space", sizeOf, "1 m", "", true},
		{"size with semicolon", sizeOf, "1m;", "", true},
		{"size too long", sizeOf, "99999999999m", "", true},
		{"cidr canonical", cidr, "10.1.2.3/8", "10.0.0.0/8", false},
		{"cidr plain address", cidr, "192.168.1.7", "192.168.1.7", false},
		{"cidr ipv6", cidr, "2001:db8::1/32", "2001:db8::/32", false},
		{"cidr with zone", cidr, "fe80::1%eth0", "", true},
		{"cidr injection", cidr, "10.0.0.0/8;allow all", "", true},
		{"rewrite target", rewriteTarget, "/api/v2/", "/api/v2/", false},
		{"rewrite target capture", rewriteTarget, "/$2", "", true},
		{"rewrite target quote", rewriteTarget, `/"`, "", true},
		{"checksum hex", checksum, "sha256:0af3", "sha256:0af3", false},
		{"checksum quote", checksum, `a"`, "", true},
		{"file path", filePath, "/var/lib/x-y_z.1", "/var/lib/x-y_z.1", false},
		{"file path with space", filePath, "/var/lib/a b", "", true},
		{"file path with semicolon", filePath, "/var;", "", true},
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

func sizeOf(s string) (string, error) { return nginxSize(model.Size(s)) }

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

func TestRegexQuote(t *testing.T) {
	if got := regexQuote("/v1.0/a+b*"); got != `/v1\.0/a\+b\*` {
		t.Errorf("regexQuote = %s", got)
	}
}
