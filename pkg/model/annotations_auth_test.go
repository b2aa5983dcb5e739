package model

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/check"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

const (
	testApr1   = "$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/"
	testBcrypt = "$2y$05$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a"
	// testHA1 is htdigest's hash of user foo, realm test, password secret.
	testHA1 = "70506fe3c4365999a9ba569c322b1aa0"
)

func TestCheckHash(t *testing.T) {
	good := []string{testApr1, "$apr1$a$h9FWgUz3n9YxylKLlR5SQ/", "$1$saltsalt$9xy1btjgzLYfb7hivXtC//", testBcrypt,
		"$2b$05$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a", "$2a$31$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a",
		"$5$saltsalt$0IyaXrmV7.sGNS6tirgqHLqX/G.FBvgkYA.lpPdS5sA", "$5$rounds=5000$saltsalt$0IyaXrmV7.sGNS6tirgqHLqX/G.FBvgkYA.lpPdS5sA",
		"$6$saltsalt$TVLlQcbpFVof5W3Yz4DTP6gRstiNuHwwTt6GLc1E5n0U0aDehy0S5knV8wiOQSpT0Y77vwPZN.Pq.H91p5hVO1",
		"abNANd1rDfiNc", "{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=", "{SSHA}gVK8WC9YyFT1gMsQHTGCgT3sSv5zYWx0"}
	bad := []string{"secret", "$apr1$abcdefghi$h9FWgUz3n9YxylKLlR5SQ/", "$apr1$$h9FWgUz3n9YxylKLlR5SQ/", "$apr1$abc$short",
		"$apr1$abcdefgh", "$2y$03$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a", "$2y$32$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a",
		"$2y$05$abc", "$2x$05$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a", "$5$saltsalt$short", "$5$rounds=x$s$0IyaXrmV7.sGNS6tirgqHLqX/G.FBvgkYA.lpPdS5sA",
		"{SHA}short", "{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ", "{SSHA}5en6G6MezRroT3XKqkdPOmY/BfQ=", "{PLAIN}secret", "abNANd1rDfiN!", "$y$j9T$a$b"}
	for _, h := range good {
		if err := intent.CheckHash(h); err != nil {
			t.Errorf("checkHash(%q): %v", h, err)
		}
	}
	for _, h := range bad {
		if intent.CheckHash(h) == nil {
			t.Errorf("checkHash(%q) accepted it", h)
		}
	}
}

func TestParseHtpasswd(t *testing.T) {
	tests := []struct {
		name, data string
		users      []config.AuthUser
		dropped    []string
		err        string
	}{
		{"one user", "foo:" + testApr1 + "\n", []config.AuthUser{{Name: "foo", Hash: testApr1}}, nil, ""},
		{"comments, blank lines, CRLF, sorted", "# admins\n\nzed:" + testBcrypt + "\r\nfoo:" + testApr1, []config.AuthUser{{Name: "foo", Hash: testApr1}, {Name: "zed", Hash: testBcrypt}}, nil, ""},
		{"comment field after the hash", "foo:" + testApr1 + ":Foo Bar", []config.AuthUser{{Name: "foo", Hash: testApr1}}, nil, ""},
		{"the first line of a user wins", "foo:" + testApr1 + "\nfoo:" + testBcrypt, []config.AuthUser{{Name: "foo", Hash: testApr1}}, nil, ""},
		{"empty hash: dropped (401, as ingress-nginx)", "foo:\nbar:" + testApr1, []config.AuthUser{{Name: "bar", Hash: testApr1}}, []string{"foo"}, ""},
		{"empty file", "", nil, nil, ""},
		{"line without a colon", "foo:" + testApr1 + "\nbar", nil, nil, "line 2: not user:hash"},
		{"plain text password", "foo:secret", nil, nil, "unknown or malformed format"},
		{"empty user", ":" + testApr1, nil, nil, "invalid user name"},
		{"user with a space", "a b:" + testApr1, nil, nil, "invalid user name"},
		{"user with a control character", "a\x01:" + testApr1, nil, nil, "invalid user name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			users, dropped, err := ParseHtpasswd([]byte(tc.data))
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
			check.Equal(t, "dropped", dropped, tc.dropped)
		})
	}
}

func opaqueSecret(ns, name string, kv ...string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{}}
	for i := 0; i+1 < len(kv); i += 2 {
		s.Data[kv[i]] = []byte(kv[i+1])
	}
	return s
}

// TestBasicAuthAnnotations: what the auth annotations give the Ingress's
// locations, and fail closed.
func TestBasicAuthAnnotations(t *testing.T) {
	file := opaqueSecret("default", "file", "auth", "foo:"+testApr1+"\n")
	amap := opaqueSecret("default", "map", "zed", testBcrypt, "foo", testApr1)
	basic := func(secret string) []ingOpt {
		return []ingOpt{nginx("auth-type", "basic"), nginx("auth-secret", secret)}
	}
	down := func(realm string) *config.BasicAuth { return &config.BasicAuth{Realm: realm, Unavailable: true} }
	digest := func(secret string) []ingOpt {
		return []ingOpt{nginx("auth-type", "digest"), nginx("auth-secret", secret)}
	}
	htdigest := opaqueSecret("default", "htdigest", "auth", "foo:test:"+strings.ToUpper(testHA1)+"\nbar:other:"+testHA1+"\n")
	dmap := opaqueSecret("default", "dmap", "foo", "test:"+testHA1, "bar", "other:"+testHA1)
	tests := []struct {
		name     string
		opts     []ingOpt
		secrets  []runtime.Object
		want     *config.BasicAuth
		problems []string
	}{
		{"no auth", nil, nil, nil, nil},
		{"auth-file, default realm", basic("file"), []runtime.Object{file}, &config.BasicAuth{Users: []config.AuthUser{{Name: "foo", Hash: testApr1}}}, nil},
		{"namespace/name and a realm", append(basic("default/file"), nginx("auth-realm", "test auth")), []runtime.Object{file},
			&config.BasicAuth{Realm: "test auth", Users: []config.AuthUser{{Name: "foo", Hash: testApr1}}}, nil},
		{"auth-map", append(basic("map"), nginx("auth-secret-type", "auth-map")), []runtime.Object{amap},
			&config.BasicAuth{Users: []config.AuthUser{{Name: "foo", Hash: testApr1}, {Name: "zed", Hash: testBcrypt}}}, nil},
		{"realm without auth: nothing", []ingOpt{nginx("auth-realm", "x")}, nil, nil, nil},
		{"satisfy any", append(basic("file"), nginx("satisfy", "any")), []runtime.Object{file},
			&config.BasicAuth{Users: []config.AuthUser{{Name: "foo", Hash: testApr1}}, SatisfyAny: true}, nil},
		{"satisfy all", append(basic("file"), nginx("satisfy", "all")), []runtime.Object{file}, &config.BasicAuth{Users: []config.AuthUser{{Name: "foo", Hash: testApr1}}}, nil},
		{"invalid satisfy", append(basic("file"), nginx("satisfy", "Any")), []runtime.Object{file}, down(""), []string{"must be any or all; the Ingress's routes answer 503"}},
		{"invalid satisfy without auth: ignored", []ingOpt{nginx("satisfy", "x")}, nil, nil, []string{"must be any or all; ignored"}},
		{"missing Secret", basic("file"), nil, down(""), []string{"Secret default/file not found; the Ingress's routes answer 503"}},
		{"Secret without the key", basic("map"), []runtime.Object{amap}, down(""), []string{`has no key "auth"`}},
		{"auth-map of an empty Secret", append(basic("e"), nginx("auth-secret-type", "auth-map")), []runtime.Object{opaqueSecret("default", "e")},
			down(""), []string{"has no data"}},
		{"bad line", basic("bad"), []runtime.Object{opaqueSecret("default", "bad", "auth", "foo:plain")}, down(""), []string{"unknown or malformed"}},
		{"another namespace", basic("other/file"), []runtime.Object{opaqueSecret("other", "file", "auth", "foo:"+testApr1)}, down(""),
			[]string{"must be in the Ingress's namespace default"}},
		{"digest: the users of the realm", append(digest("htdigest"), nginx("auth-realm", "test")), []runtime.Object{htdigest},
			&config.BasicAuth{Realm: "test", Users: []config.AuthUser{{Name: "foo", Hash: testHA1}}, Digest: true}, nil},
		{"digest auth-map", append(digest("dmap"), nginx("auth-realm", "test"), nginx("auth-secret-type", "auth-map")), []runtime.Object{dmap},
			&config.BasicAuth{Realm: "test", Users: []config.AuthUser{{Name: "foo", Hash: testHA1}}, Digest: true}, nil},
		{"digest of an htpasswd file", digest("file"), []runtime.Object{file}, down(""), []string{"line 1: not user:realm:hash"}},
		{"digest with a bad hash", digest("bad"), []runtime.Object{opaqueSecret("default", "bad", "auth", "foo::xyz")}, down(""), []string{"32 hex digits"}},
		{"unknown auth-type", []ingOpt{nginx("auth-type", "Basic"), nginx("auth-secret", "file")}, []runtime.Object{file}, down(""), []string{"must be basic or digest"}},
		{"auth-secret without auth-type", []ingOpt{nginx("auth-secret", "file")}, []runtime.Object{file}, down(""), []string{"auth-secret without auth-type"}},
		{"auth-type without auth-secret", []ingOpt{nginx("auth-type", "basic")}, nil, down(""), []string{"auth-type without auth-secret"}},
		{"invalid secret name", basic("a/b/c"), nil, down(""), []string{`must be "name" or "namespace/name"`}},
		{"invalid realm", append(basic("file"), nginx("auth-realm", `a"b`)), []runtime.Object{file}, down(""), []string{"auth-realm"}},
		{"invalid auth-secret-type", append(basic("file"), nginx("auth-secret-type", "map")), []runtime.Object{file}, down(""),
			[]string{"must be auth-file or auth-map"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := append([]ingOpt{rule("a.example.com", prefix("/", "web", 80))}, tc.opts...)
			objs := append([]runtime.Object{newIngress("default", "web", opts...), service("default", "web", svcPort("http", 80))}, tc.secrets...)
			cfg := Build(newTestStore(t, objs...), testOptions())
			checkProblems(t, cfg.Problems, tc.problems)
			i := slices.IndexFunc(cfg.Servers, func(s config.Server) bool { return s.Hostname == "a.example.com" })
			if i < 0 {
				t.Fatal("no server a.example.com")
			}
			for _, l := range cfg.Servers[i].Locations {
				if l.Ingress == "default/web" {
					check.Equal(t, "BasicAuth", l.Settings.BasicAuth, tc.want)
				}
			}
		})
	}
}

// FuzzHtpasswd: an accepted file holds only valid users and hashes, sorted
// and unique, none of which can break out of the Lua data.
func FuzzHtpasswd(f *testing.F) {
	for _, seed := range []string{"foo:" + testApr1, "#c\n\nfoo:" + testBcrypt + ":x\r\nbar:", "a", ":", "foo:{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=\nfoo:x"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		users, dropped, err := ParseHtpasswd(data)
		if err != nil {
			return
		}
		for i, u := range users {
			if intent.CheckHash(u.Hash) != nil || !intent.Printable(u.Name) || strings.ContainsAny(u.Name+u.Hash, ":\"\\\n\r ") {
				t.Fatalf("accepted %q:%q", u.Name, u.Hash)
			}
			if i > 0 && users[i-1].Name >= u.Name {
				t.Fatalf("not sorted and unique: %q", users)
			}
			if slices.Contains(dropped, u.Name) {
				t.Fatalf("%q both kept and dropped", u.Name)
			}
		}
	})
}
