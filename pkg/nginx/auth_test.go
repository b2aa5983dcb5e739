package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"encoding/base64"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// authHashes are the hashes of the password "secret" in every format
// lua/auth.lua verifies (made with openssl passwd and libcrypt).
var authHashes = map[string]string{
	"apr1":    "$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/",
	"md5":     "$1$saltsalt$9xy1btjgzLYfb7hivXtC//",
	"sha256":  "$5$saltsalt$0IyaXrmV7.sGNS6tirgqHLqX/G.FBvgkYA.lpPdS5sA",
	"sha512":  "$6$saltsalt$TVLlQcbpFVof5W3Yz4DTP6gRstiNuHwwTt6GLc1E5n0U0aDehy0S5knV8wiOQSpT0Y77vwPZN.Pq.H91p5hVO1",
	"bcrypt":  "$2y$05$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a",
	"bcryptb": "$2b$05$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a",
	"des":     "abNANd1rDfiNc",
	"sha1":    "{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=",
	"ssha":    "{SSHA}gVK8WC9YyFT1gMsQHTGCgT3sSv5zYWx0",
}

func authSecret(name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func htpasswdOf(hashes map[string]string) string {
	var b strings.Builder
	b.WriteString("# users\n\n")
	for user, h := range hashes {
		b.WriteString(user + ":" + h + "\n")
	}
	return b.String()
}

// buildWithSecrets builds Ingresses and Secrets; the Problems must be those
// listed (by substring).
func buildWithSecrets(t testing.TB, backends map[string]int, secrets []*corev1.Secret, problems []string, ings ...*networkingv1.Ingress) *config.Configuration {
	t.Helper()
	s := model.NewStore(ingress.NewSource())
	apply := func(ev events.Event) {
		if _, err := s.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	for name, port := range backends {
		apply(upsertEventOf(fixtures.Service("default", name, 80), events.KindService, "default", name))
		apply(upsertEventOf(fixtures.EndpointSlice("default", name+"-1", name, int32(port), "127.0.0.1"), events.KindEndpointSlice, "default", name+"-1"))
	}
	for _, sec := range secrets {
		apply(upsertEventOf(sec, events.KindSecret, sec.Namespace, sec.Name))
	}
	for _, ing := range ings {
		apply(upsertEventOf(ing, events.KindIngress, "default", ing.Name))
	}
	cfg := hostileBuild(s)
	if len(cfg.Problems) != len(problems) {
		t.Fatalf("problems: %+v, want %q", cfg.Problems, problems)
	}
	for i, p := range cfg.Problems {
		if !strings.Contains(p.Reason, problems[i]) {
			t.Errorf("problem %d %q, want %q", i, p.Reason, problems[i])
		}
	}
	return cfg
}

func basicHeader(user, pw string) []string {
	return []string{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw))}
}

// TestBasicAuth: auth-type basic as ingress-nginx's e2e tests
// (annotations/auth.go) describe it, every hash format, and fail closed.
func TestBasicAuth(t *testing.T) {
	web := startEcho(t, "web")
	secrets := []*corev1.Secret{
		authSecret("file", map[string]string{"auth": htpasswdOf(authHashes) + "empty:\n"}),
		authSecret("map", map[string]string{"foo": authHashes["apr1"]}),
		authSecret("nokey", map[string]string{"other": "x"}),
		authSecret("badline", map[string]string{"auth": "foo:" + authHashes["apr1"] + "\nnot a line\n"}),
	}
	rule := func(host string) fixtures.IngressOption { return fixtures.Rule(host, fixtures.Prefix("/", "web", 80)) }
	basic := func(secret string) []fixtures.IngressOption {
		return []fixtures.IngressOption{ann("auth-type", "basic"), ann("auth-secret", secret), ann("auth-realm", "test auth")}
	}
	cfg := buildWithSecrets(t, map[string]int{"web": web.Port()}, secrets,
		[]string{`user "empty" has an empty password hash`, "Secret default/badline line 2: not user:hash",
			"must be in the Ingress's namespace", "Secret default/missing not found", `Secret default/nokey has no key "auth"`,
			"auth-type without auth-secret"},
		fixtures.Ingress("default", "file", append(basic("file"), rule("file.test"))...),
		fixtures.Ingress("default", "map", append(basic("default/map"), ann("auth-secret-type", "auth-map"), rule("map.test"))...),
		fixtures.Ingress("default", "norealm", ann("auth-type", "basic"), ann("auth-secret", "map"), ann("auth-secret-type", "auth-map"), rule("norealm.test")),
		fixtures.Ingress("default", "zmissing", append(basic("missing"), rule("missing.test"))...),
		fixtures.Ingress("default", "znokey", append(basic("nokey"), rule("nokey.test"))...),
		fixtures.Ingress("default", "zbadline", append(basic("badline"), rule("badline.test"))...),
		fixtures.Ingress("default", "ztypeonly", ann("auth-type", "basic"), rule("typeonly.test")),
		fixtures.Ingress("default", "zcross", append(basic("other/file"), rule("cross.test"))...),
		fixtures.Ingress("default", "open", fixtures.Rule("file.test", fixtures.Prefix("/open", "web", 80))),
	)
	h := startNginx(t, cfg, nil)
	for format := range authHashes {
		t.Run("200 with "+format, func(t *testing.T) {
			if r := h.mustGet("http://file.test/", basicHeader(format, "secret")...); r.Status != 200 || r.Reply.Backend != "web" {
				t.Fatalf("status %d from %q, want 200 from web", r.Status, r.Reply.Backend)
			}
			// Again: the verified header is cached; the answer is the same.
			if r := h.mustGet("http://file.test/", basicHeader(format, "secret")...); r.Status != 200 {
				t.Fatalf("second request: status %d", r.Status)
			}
			if r := h.mustGet("http://file.test/", basicHeader(format, "wrong")...); r.Status != 401 {
				t.Fatalf("wrong password: status %d, want 401", r.Status)
			}
		})
	}
	tests := []struct {
		name, url string
		header    []string
		status    int
		realm     string
	}{
		{"no Authorization header", "http://file.test/", nil, 401, `Basic realm="test auth"`},
		{"unknown user", "http://file.test/", basicHeader("nobody", "secret"), 401, `Basic realm="test auth"`},
		{"user with an empty hash", "http://file.test/", basicHeader("empty", ""), 401, `Basic realm="test auth"`},
		{"not basic", "http://file.test/", []string{"Authorization", "Bearer x"}, 401, `Basic realm="test auth"`},
		{"auth-map", "http://map.test/", basicHeader("foo", "secret"), 200, ""},
		{"auth-map wrong password", "http://map.test/", basicHeader("foo", "bar"), 401, `Basic realm="test auth"`},
		{"default realm", "http://norealm.test/", nil, 401, `Basic realm=""`},
		{"another Ingress's path on the host is open", "http://file.test/open", nil, 200, ""},
		{"missing Secret", "http://missing.test/", basicHeader("foo", "secret"), 503, ""},
		{"Secret without the key", "http://nokey.test/", basicHeader("foo", "secret"), 503, ""},
		{"unparsable line", "http://badline.test/", basicHeader("foo", "secret"), 503, ""},
		{"auth-type without auth-secret", "http://typeonly.test/", nil, 503, ""},
		{"cross-namespace Secret", "http://cross.test/", basicHeader("apr1", "secret"), 503, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.mustGet(tc.url, tc.header...)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d", r.Status, tc.status)
			}
			if got := r.Header.Get("WWW-Authenticate"); got != tc.realm {
				t.Errorf("WWW-Authenticate %q, want %q", got, tc.realm)
			}
			if tc.status != 200 && r.Reply.Backend != "" {
				t.Errorf("served by %q", r.Reply.Backend)
			}
		})
	}
}

// TestSatisfy: satisfy any lets a client the allow-list admits in without
// credentials and asks the others for them; satisfy all (the default)
// wants both (annotations/satisfy.go, nginx's satisfy).
func TestSatisfy(t *testing.T) {
	web := startEcho(t, "web")
	secrets := []*corev1.Secret{authSecret("file", map[string]string{"auth": "foo:" + authHashes["apr1"] + "\n"})}
	ing := func(name, satisfy, allow string) *networkingv1.Ingress {
		opts := []fixtures.IngressOption{ann("auth-type", "basic"), ann("auth-secret", "file"), ann("allowlist-source-range", allow),
			fixtures.Rule(name+".test", fixtures.Prefix("/", "web", 80))}
		if satisfy != "" {
			opts = append(opts, ann("satisfy", satisfy))
		}
		return fixtures.Ingress("default", name, opts...)
	}
	cfg := buildWithSecrets(t, map[string]int{"web": web.Port()}, secrets, []string{"is not a CIDR"},
		ing("any-in", "any", "127.0.0.1/32"), ing("any-out", "any", "10.0.0.0/8"),
		ing("all-in", "", "127.0.0.1/32"), ing("all-out", "all", "10.0.0.0/8"),
		fixtures.Ingress("default", "any-denied", ann("auth-type", "basic"), ann("auth-secret", "file"), ann("satisfy", "any"),
			ann("allowlist-source-range", "127.0.0.0/8"), ann("denylist-source-range", "127.0.0.1"), fixtures.Rule("any-denied.test", fixtures.Prefix("/", "web", 80))),
		fixtures.Ingress("default", "any-bad", ann("auth-type", "basic"), ann("auth-secret", "file"), ann("satisfy", "any"),
			ann("allowlist-source-range", "127.0.0.1/33"), fixtures.Rule("any-bad.test", fixtures.Prefix("/", "web", 80))))
	h := startNginx(t, cfg, nil)
	good := basicHeader("foo", "secret")
	tests := []struct {
		name, host string
		header     []string
		status     int
	}{
		{"any: allowed address, no credentials", "any-in", nil, 200},
		{"any: other address, no credentials", "any-out", nil, 401},
		{"any: other address, wrong password", "any-out", basicHeader("foo", "x"), 401},
		{"any: other address, credentials", "any-out", good, 200},
		{"all: allowed address, no credentials", "all-in", nil, 401},
		{"all: allowed address, credentials", "all-in", good, 200},
		{"all: other address, credentials", "all-out", good, 403},
		{"any: denied address, no credentials", "any-denied", nil, 401},
		{"any: denied address, credentials", "any-denied", good, 200},
		{"any: an allow-list that cannot be applied", "any-bad", good, 503},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if r := h.mustGet("http://"+tc.host+".test/", tc.header...); r.Status != tc.status {
				t.Fatalf("status %d, want %d", r.Status, tc.status)
			}
		})
	}
}

// TestBasicAuthThatDoesNotCompile: auth Lua refuses (Build never emits
// one: a realm with a quote, a user without a hash) fails its host closed
// (503); the other hosts are served.
func TestBasicAuthThatDoesNotCompile(t *testing.T) {
	app := startEcho(t, "app")
	bad := func(a *config.BasicAuth) config.Location {
		l := prefixLoc("/", "app")
		l.Settings.BasicAuth = a
		return l
	}
	cfg := configOf("auth-bad-1", []config.Server{
		serverOf("good.test", prefixLoc("/", "app")),
		serverOf("realm.test", bad(&config.BasicAuth{Realm: `a"b`})),
		serverOf("user.test", bad(&config.BasicAuth{Users: []config.AuthUser{{Name: "foo"}}})),
	}, backendOf("app", app))
	h := startNginx(t, cfg, nil)
	h.allowLuaErrors = true
	for url, status := range map[string]int{"http://good.test/": 200, "http://realm.test/": 503, "http://user.test/": 503} {
		if r := h.mustGet(url, basicHeader("foo", "secret")...); r.Status != status {
			t.Errorf("GET %s = %d, want %d", url, r.Status, status)
		}
	}
}

// TestAuthorizationNotForwarded: after basic or digest auth the backend
// never sees the user's credentials, as ingress-nginx's
// proxy_set_header Authorization "" (HTTP and gRPC); a route without auth
// passes the header on, and so does a route whose auth a satisfy-any
// allow-list waived, since ingress-nginx clears it for every request of
// a location with auth.
func TestAuthorizationNotForwarded(t *testing.T) {
	web := startEcho(t, "web")
	secrets := []*corev1.Secret{
		authSecret("basic", map[string]string{"auth": "foo:" + authHashes["apr1"] + "\n"}),
		authSecret("digest", map[string]string{"auth": "foo:test auth:" + testDigestHA1 + "\n"}),
	}
	auth := func(name, typ string, extra ...fixtures.IngressOption) *networkingv1.Ingress {
		opts := append([]fixtures.IngressOption{ann("auth-type", typ), ann("auth-secret", typ), ann("auth-realm", "test auth"),
			fixtures.Rule(name+".test", fixtures.Prefix("/", "web", 80))}, extra...)
		return fixtures.Ingress("default", name, opts...)
	}
	cfg := buildWithSecrets(t, map[string]int{"web": web.Port()}, secrets, nil,
		auth("basic", "basic"), auth("digest", "digest"),
		auth("waived", "basic", ann("satisfy", "any"), ann("whitelist-source-range", "127.0.0.1/32")),
		fixtures.Ingress("default", "open", fixtures.Rule("open.test", fixtures.Prefix("/", "web", 80))))
	h := startNginx(t, cfg, nil)

	challenge := digestChallenge(t, h.mustGet("http://digest.test/").Header.Get("WWW-Authenticate"))
	tests := []struct {
		name, url string
		header    []string
		forwarded bool
	}{
		{"basic", "http://basic.test/", basicHeader("foo", "secret"), false},
		{"digest", "http://digest.test/", digestHeader("foo", "test auth", "secret", "GET", "/", challenge["nonce"], 1), false},
		{"satisfy any, admitted by the allow-list", "http://waived.test/", basicHeader("other", "x"), false},
		{"no auth", "http://open.test/", basicHeader("foo", "secret"), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.mustGet(tc.url, tc.header...)
			if r.Status != 200 || r.Reply.Backend != "web" {
				t.Fatalf("status %d from %q, want 200 from web", r.Status, r.Reply.Backend)
			}
			got := r.Reply.Headers.Get("Authorization")
			if want := map[bool]string{true: tc.header[1], false: ""}[tc.forwarded]; got != want {
				t.Errorf("the backend got Authorization %q, want %q", got, want)
			}
		})
	}
}
