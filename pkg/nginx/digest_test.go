package nginx

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// testDigestHA1 is htdigest's hash of user foo, realm "test auth",
// password secret.
var testDigestHA1 = md5hex("foo:test auth:secret")

var challengeParam = regexp.MustCompile(`(\w+)="([^"]*)"`)

// digestChallenge parses a Digest WWW-Authenticate header.
func digestChallenge(t *testing.T, h string) map[string]string {
	t.Helper()
	if !strings.HasPrefix(h, "Digest ") {
		t.Fatalf("WWW-Authenticate %q, want a Digest challenge", h)
	}
	p := map[string]string{}
	for _, m := range challengeParam.FindAllStringSubmatch(h, -1) {
		p[m[1]] = m[2]
	}
	return p
}

// digestHeader answers a challenge as an RFC 2617 client (qop=auth).
func digestHeader(user, realm, pw, method, uri, nonce string, nc int) []string {
	ha1 := md5hex(user + ":" + realm + ":" + pw)
	ha2 := md5hex(method + ":" + uri)
	ncs := fmt.Sprintf("%08x", nc)
	resp := md5hex(ha1 + ":" + nonce + ":" + ncs + ":cnonce1:auth:" + ha2)
	return []string{"Authorization", fmt.Sprintf(`Digest username="%s", realm="%s", nonce="%s", uri="%s", algorithm=MD5, qop=auth, nc=%s, cnonce="cnonce1", response="%s"`,
		user, realm, nonce, uri, ncs, resp)}
}

// TestDigestAuth: auth-type digest answers the module's challenge
// (algorithm MD5, qop auth, the realm, a nonce), admits the RFC 2617
// response of a user of the htdigest file, refuses a wrong password, a
// forged or replayed nonce, another URI and another realm's user, and
// fails closed (503) when the Secret cannot be applied.
func TestDigestAuth(t *testing.T) {
	web := startEcho(t, "web")
	secrets := []*corev1.Secret{
		authSecret("digest", map[string]string{"auth": "foo:test auth:" + testDigestHA1 + "\nbar:other:" + md5hex("bar:other:secret") + "\n"}),
		authSecret("htpasswd", map[string]string{"auth": "foo:" + authHashes["apr1"] + "\n"}),
	}
	digest := func(name, secret string) *networkingv1.Ingress {
		return fixtures.Ingress("default", name, ann("auth-type", "digest"), ann("auth-secret", secret), ann("auth-realm", "test auth"),
			fixtures.Rule(name+".test", fixtures.Prefix("/", "web", 80)))
	}
	cfg := buildWithSecrets(t, map[string]int{"web": web.Port()}, secrets,
		[]string{"Secret default/htpasswd line 1: not user:realm:hash"},
		digest("digest", "digest"), digest("htpasswd", "htpasswd"))
	h := startNginx(t, cfg, nil)

	r := h.mustGet("http://digest.test/a?b=c")
	if r.Status != 401 || r.Reply.Backend != "" {
		t.Fatalf("no credentials: status %d from %q, want 401", r.Status, r.Reply.Backend)
	}
	ch := digestChallenge(t, r.Header.Get("WWW-Authenticate"))
	if ch["realm"] != "test auth" || ch["qop"] != "auth" || ch["algorithm"] != "MD5" || len(ch["nonce"]) != 32 {
		t.Fatalf("challenge %v", ch)
	}
	nonce := ch["nonce"]
	ok := digestHeader("foo", "test auth", "secret", "GET", "/a?b=c", nonce, 1)
	if r := h.mustGet("http://digest.test/a?b=c", ok...); r.Status != 200 || r.Reply.Backend != "web" {
		t.Fatalf("credentials: status %d from %q, want 200 from web", r.Status, r.Reply.Backend)
	}
	t.Run("a nonce serves 20 requests, then is stale", func(t *testing.T) {
		var stale map[string]string
		for nc := 100; nc < 130 && stale == nil; nc++ {
			r := h.mustGet("http://digest.test/", digestHeader("foo", "test auth", "secret", "GET", "/", nonce, nc)...)
			if r.Status == 401 {
				stale = digestChallenge(t, r.Header.Get("WWW-Authenticate"))
			} else if r.Status != 200 {
				t.Fatalf("nc %d: status %d", nc, r.Status)
			}
		}
		if stale == nil || stale["stale"] != "true" || stale["nonce"] == nonce {
			t.Fatalf("after 30 uses: challenge %v, want a new nonce with stale=true", stale)
		}
		r := h.mustGet("http://digest.test/", digestHeader("foo", "test auth", "secret", "GET", "/", stale["nonce"], 1)...)
		if r.Status != 200 {
			t.Fatalf("the new nonce: status %d, want 200", r.Status)
		}
	})
	// Failed sign-ins: five from one address refuse it for 300 s, good
	// credentials included (the module's maxtries and evasion).
	fresh := digestChallenge(t, h.mustGet("http://digest.test/").Header.Get("WWW-Authenticate"))["nonce"]
	again := digestHeader("foo", "test auth", "secret", "GET", "/a?b=c", fresh, 1)
	if r := h.mustGet("http://digest.test/a?b=c", again...); r.Status != 200 {
		t.Fatalf("a fresh nonce: status %d, want 200", r.Status)
	}
	tests := []struct {
		name, url string
		header    []string
		status    int
	}{
		{"the same nc again (a replay)", "http://digest.test/a?b=c", again, 401},
		{"wrong password", "http://digest.test/", digestHeader("foo", "test auth", "wrong", "GET", "/", fresh, 3), 401},
		{"another URI than the request's", "http://digest.test/other", digestHeader("foo", "test auth", "secret", "GET", "/", fresh, 4), 401},
		{"a forged nonce", "http://digest.test/", digestHeader("foo", "test auth", "secret", "GET", "/", strings.Repeat("0", 32), 1), 401},
		{"another realm's user", "http://digest.test/", digestHeader("bar", "other", "secret", "GET", "/", fresh, 5), 401},
		{"basic credentials", "http://digest.test/", basicHeader("foo", "secret"), 401},
		{"unterminated quote", "http://digest.test/", []string{"Authorization", `Digest username="foo`}, 401},
		{"an htpasswd Secret fails closed", "http://htpasswd.test/", basicHeader("foo", "secret"), 503},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.mustGet(tc.url, tc.header...)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d", r.Status, tc.status)
			}
			if tc.status == 401 {
				digestChallenge(t, r.Header.Get("WWW-Authenticate"))
			}
			if tc.status != 200 && r.Reply.Backend != "" {
				t.Errorf("served by %q", r.Reply.Backend)
			}
		})
	}
	t.Run("five failures refuse the address", func(t *testing.T) {
		r := h.mustGet("http://digest.test/", digestHeader("foo", "test auth", "secret", "GET", "/", fresh, 9)...)
		if r.Status != 401 || r.Reply.Backend != "" {
			t.Fatalf("good credentials after five failures: status %d from %q, want 401", r.Status, r.Reply.Backend)
		}
	})
}

// TestDigestAuthenticationInfo: as the module ingress-nginx builds in, a
// verified request's response carries Authentication-Info with rspauth
// (the response digest over ":" and the URI, RFC 2617 3.2.3), cnonce and
// nc; a challenge carries none. Credentials that verify clear the
// address's failed sign-ins: four failures, a good sign-in, four more
// failures, and good credentials are still admitted (eight failures in a
// row would have refused the address).
func TestDigestAuthenticationInfo(t *testing.T) {
	web := startEcho(t, "web")
	secret := authSecret("digest", map[string]string{"auth": "foo:test auth:" + testDigestHA1 + "\n"})
	ing := fixtures.Ingress("default", "digest", ann("auth-type", "digest"), ann("auth-secret", "digest"), ann("auth-realm", "test auth"),
		fixtures.Rule("digest.test", fixtures.Prefix("/", "web", 80)))
	h := startNginx(t, buildWithSecrets(t, map[string]int{"web": web.Port()}, []*corev1.Secret{secret}, nil, ing), nil)

	first := h.mustGet("http://digest.test/p?q=1")
	if v := first.Header.Get("Authentication-Info"); v != "" {
		t.Errorf("a challenge carries Authentication-Info %q", v)
	}
	nonce := digestChallenge(t, first.Header.Get("WWW-Authenticate"))["nonce"]
	r := h.mustGet("http://digest.test/p?q=1", digestHeader("foo", "test auth", "secret", "GET", "/p?q=1", nonce, 1)...)
	if r.Status != 200 || r.Reply.Backend != "web" {
		t.Fatalf("credentials: status %d from %q, want 200 from web", r.Status, r.Reply.Backend)
	}
	rspauth := md5hex(testDigestHA1 + ":" + nonce + ":00000001:cnonce1:auth:" + md5hex(":/p?q=1"))
	if got, want := r.Header.Get("Authentication-Info"), `qop="auth", rspauth="`+rspauth+`", cnonce="cnonce1", nc=00000001`; got != want {
		t.Errorf("Authentication-Info %q, want %q", got, want)
	}
	nc := 10
	fail := func(n int) {
		t.Helper()
		for range n {
			nc++
			if r := h.mustGet("http://digest.test/", digestHeader("foo", "test auth", "wrong", "GET", "/", nonce, nc)...); r.Status != 401 {
				t.Fatalf("wrong password: status %d, want 401", r.Status)
			}
		}
	}
	good := func(what string) { // with a fresh nonce: a nonce serves 10 s from its first use
		t.Helper()
		fresh := digestChallenge(t, h.mustGet("http://digest.test/").Header.Get("WWW-Authenticate"))["nonce"]
		if r := h.mustGet("http://digest.test/", digestHeader("foo", "test auth", "secret", "GET", "/", fresh, 1)...); r.Status != 200 {
			t.Fatalf("%s: status %d, want 200", what, r.Status)
		}
	}
	fail(4)
	good("after four failures")
	fail(4)
	good("after four more failures, the count cleared")
}
