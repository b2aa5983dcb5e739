package ingress

import (
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

func TestParseAuthURL(t *testing.T) {
	good := map[string]string{
		"http://auth.default.svc.cluster.local/verify":        "auth.default.svc.cluster.local",
		"https://10.0.0.1:8443/oauth2/auth":                   "10.0.0.1",
		"http://[::1]:80/x?rd=$escaped_request_uri&h=${host}": "[::1]",
		"http://auth": "auth",
		"http://auth:4180?u=$request_uri,$http_x_user,$cookie_SESS": "auth",
	}
	for v, host := range good {
		if got, err := intent.ParseAuthURL(v); err != nil || got != host {
			t.Errorf("parseAuthURL(%q) = %q, %v; want %q", v, got, err, host)
		}
	}
	bad := []string{"", "ftp://auth/x", "auth/x", "HTTP//auth", "http://$host/x", "http://user@auth/x", "http://auth:0/",
		"http://auth:99999/", "http://auth/x y", "http://auth/$document_root", "http://auth/$", "http://auth/${}", "http://auth/\"x",
		"http://auth/x;rm", "http://-auth/", "http://a..b/", "http://[zz]/", "http://auth/${host", "http://auth/a{b}"}
	for _, v := range bad {
		if _, err := intent.ParseAuthURL(v); err == nil {
			t.Errorf("parseAuthURL(%q) accepted it", v)
		}
	}
}

// FuzzAuthURL: an accepted auth-url is http(s) with a host free of
// variables, and holds no character that could leave an nginx variable or
// a Lua string; every '$' starts a listed variable.
func FuzzAuthURL(f *testing.F) {
	for _, seed := range []string{"http://a/b?rd=$escaped_request_uri", "https://[::1]:1/${host}", "http://$host/", "http://a/$x", "http://a/;", "http://a:1/ b"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		host, err := intent.ParseAuthURL(v)
		if err != nil {
			return
		}
		if !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") || strings.ContainsAny(host, "$@/?") || host == "" {
			t.Fatalf("accepted %q (host %q)", v, host)
		}
		checkTemplate(t, v)
	})
}

// FuzzAuthTemplates: signin and cache key templates hold only listed
// variables and safe characters.
func FuzzAuthTemplates(f *testing.F) {
	for _, seed := range []string{"https://$host/oauth2/start?rd=$escaped_request_uri", "$remote_user$http_authorization", "/x${cookie_a}", "$", "${"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if intent.ParseAuthSignin(v) == nil {
			checkTemplate(t, v)
		}
		if intent.ParseAuthTemplate(v, intent.CacheKeyChar) == nil {
			checkTemplate(t, v)
		}
	})
}

func checkTemplate(t *testing.T, v string) {
	t.Helper()
	if strings.ContainsAny(v, " \t\r\n\"'`\\;#<>") || len(v) > intent.MaxAuthURLLen {
		t.Fatalf("accepted %q", v)
	}
	for i := strings.IndexByte(v, '$'); i >= 0; {
		name, n := intent.TemplateVar(v[i+1:])
		if !intent.AuthVariable(name) {
			t.Fatalf("accepted %q with variable %q", v, name)
		}
		next := strings.IndexByte(v[i+1+n:], '$')
		if next < 0 {
			break
		}
		i += 1 + n + next
	}
}

// FuzzAuthLists: accepted header lists and cache durations are what Lua
// compiles (names of [A-Za-z0-9_-], codes 100 to 599, times in bounds).
func FuzzAuthLists(f *testing.F) {
	for _, seed := range []string{"X-User, X-Email", "200 202 401 5m", "5m, 401 1h", "a;b", "200 9999999999y"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if hs, err := intent.ParseAuthHeaderList(v); err == nil {
			for _, h := range hs {
				if h == "" || strings.Trim(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" {
					t.Fatalf("accepted header %q of %q", h, v)
				}
			}
		}
		if ds, err := intent.ParseAuthCacheDurations(v); err == nil {
			for _, d := range ds {
				if d.Millis <= 0 || d.Millis > intent.MaxAuthCacheMillis {
					t.Fatalf("accepted time %d of %q", d.Millis, v)
				}
				for _, c := range d.Codes {
					if c < 100 || c > 599 {
						t.Fatalf("accepted code %d of %q", c, v)
					}
				}
			}
		}
	})
}
