package model

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/check"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"strings"
	"testing"
)

func TestParseHtdigest(t *testing.T) {
	tests := []struct {
		name, data, realm string
		users             []config.AuthUser
		err               string
	}{
		{"the realm's users", "# c\n\nfoo:test:" + testHA1 + "\r\nbar:other:" + testHA1 + "\n", "test", []config.AuthUser{{Name: "foo", Hash: testHA1}}, ""},
		{"hash lower-cased", "foo:test:" + strings.ToUpper(testHA1), "test", []config.AuthUser{{Name: "foo", Hash: testHA1}}, ""},
		{"first line of a user wins", "foo:test:" + testHA1 + "\nfoo:test:" + strings.Repeat("0", 32), "test", []config.AuthUser{{Name: "foo", Hash: testHA1}}, ""},
		{"sorted", "zed:r:" + testHA1 + "\nfoo:r:" + testHA1, "r", []config.AuthUser{{Name: "foo", Hash: testHA1}, {Name: "zed", Hash: testHA1}}, ""},
		{"empty realm", "foo::" + testHA1, "", []config.AuthUser{{Name: "foo", Hash: testHA1}}, ""},
		{"no realm's user", "foo:test:" + testHA1, "other", nil, ""},
		{"htpasswd line", "foo:" + testApr1, "test", nil, "not user:realm:hash"},
		{"no colon", "foo", "test", nil, "not user:realm:hash"},
		{"short hash", "foo:test:abc", "test", nil, "32 hex digits"},
		{"not hex", "foo:test:" + strings.Repeat("g", 32), "test", nil, "32 hex digits"},
		{"quote in user", `f"o:test:` + testHA1, "test", nil, "invalid user name"},
		{"empty user", ":test:" + testHA1, "test", nil, "invalid user name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			users, _, err := ParseHtdigest([]byte(tc.data), tc.realm)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			check.Equal(t, "users", users, tc.users)
		})
	}
}

// FuzzHtdigest: an accepted file gives only users of the realm with a
// lower-case hex HA1, sorted and unique, none able to break out of the
// Lua data or the Authorization header's quoting.
func FuzzHtdigest(f *testing.F) {
	for _, seed := range []string{"foo:test:" + testHA1, "#c\n\nfoo:test:" + testHA1 + "\r\nbar:x:", "a", "::", "foo:a:b:" + testHA1} {
		f.Add([]byte(seed), "test")
	}
	f.Fuzz(func(t *testing.T, data []byte, realm string) {
		users, _, err := ParseHtdigest(data, realm)
		if err != nil {
			return
		}
		for i, u := range users {
			if !intent.IsHexMD5(u.Hash) || strings.ToLower(u.Hash) != u.Hash || !intent.Printable(u.Name) || strings.ContainsAny(u.Name, ":\"\\\n\r ") {
				t.Fatalf("accepted %q:%q", u.Name, u.Hash)
			}
			if i > 0 && users[i-1].Name >= u.Name {
				t.Fatalf("not sorted and unique: %q", users)
			}
		}
	})
}
