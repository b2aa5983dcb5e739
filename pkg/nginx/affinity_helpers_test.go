package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"crypto/md5" //nolint:gosec // the balancer's own hash, mirrored to predict its choices
	"encoding/hex"
	"net/http"
	"net/http/cookiejar"
	"sort"
	"strconv"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// Helpers of the affinity and hashing tests (balancer_test.go).

// buildServices builds, with model.Build, the Configuration of ings and a
// Service per entry of services, with one endpoint per echo server (an
// EndpointSlice each, as their ports differ). Problems fail the test.
func buildServices(t *testing.T, services map[string][]*echo.Server, ings ...*networkingv1.Ingress) *config.Configuration {
	t.Helper()
	cfg := buildServicesWithProblems(t, services, ings...)
	if len(cfg.Problems) > 0 {
		t.Fatalf("problems: %+v", cfg.Problems)
	}
	return cfg
}

// buildServicesWithProblems is buildServices, Problems left to the caller.
func buildServicesWithProblems(t *testing.T, services map[string][]*echo.Server, ings ...*networkingv1.Ingress) *config.Configuration {
	t.Helper()
	s := model.NewStore(ingress.NewSource())
	apply := func(ev events.Event) {
		if _, err := s.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	for name, eps := range services {
		apply(upsertEventOf(fixtures.Service("default", name, 80), events.KindService, "default", name))
		for i, e := range eps {
			slice := name + "-" + strconv.Itoa(i)
			apply(upsertEventOf(fixtures.EndpointSlice("default", slice, name, int32(e.Port()), "127.0.0.1"),
				events.KindEndpointSlice, "default", slice))
		}
	}
	for _, ing := range ings {
		apply(upsertEventOf(ing, events.KindIngress, "default", ing.Name))
	}
	return hostileBuild(s)
}

func md5hex(s string) string {
	sum := md5.Sum([]byte(s)) //nolint:gosec // see the import
	return hex.EncodeToString(sum[:])
}

// backendKey is the second part of a sticky cookie's value.
func backendKey(name string) string { return md5hex(md5hex(name) + name) }

// persistentKey is the first part of a persistent sticky cookie's value.
func persistentKey(backend string, e *echo.Server) string {
	return md5hex(backend + "127.0.0.1:" + strconv.Itoa(e.Port()))
}

// ring mirrors balancer/chash.lua's ring, to predict the owner of a key.
type ring struct {
	hashes []uint32
	owners []string
}

func hash32(s string) uint32 {
	n, _ := strconv.ParseUint(md5hex(s)[:8], 16, 32)
	return uint32(n)
}

func newRing(ids ...string) *ring {
	type point struct {
		h  uint32
		id string
	}
	var pts []point
	for _, id := range ids {
		for p := 1; p <= 160; p++ {
			pts = append(pts, point{hash32(id + "#" + strconv.Itoa(p)), id})
		}
	}
	sort.Slice(pts, func(i, j int) bool {
		if pts[i].h != pts[j].h {
			return pts[i].h < pts[j].h
		}
		return pts[i].id < pts[j].id
	})
	r := &ring{}
	for _, p := range pts {
		r.hashes, r.owners = append(r.hashes, p.h), append(r.owners, p.id)
	}
	return r
}

func (r *ring) owner(key string) string {
	h := hash32(key)
	i := sort.Search(len(r.hashes), func(i int) bool { return r.hashes[i] >= h })
	if i == len(r.hashes) {
		i = 0
	}
	return r.owners[i]
}

// idOf is an endpoint's id in the balancer ("127.0.0.1:port").
func idOf(e *echo.Server) string { return "127.0.0.1:" + strconv.Itoa(e.Port()) }

// client is a browser-like client of h: its own cookie jar, fresh
// connections (so that both workers take part).
func (h *harness) client(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := h.newHTTPClient()
	c.Jar = jar
	c.Transport.(*http.Transport).DisableKeepAlives = true
	return c
}

// setCookie returns the response's Set-Cookie named name, parsed, or nil.
func setCookie(t *testing.T, r echo.Response, name string) *http.Cookie {
	t.Helper()
	var found *http.Cookie
	for _, line := range r.Header.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err != nil {
			t.Fatalf("Set-Cookie %q: %v", line, err)
		}
		if c.Name == name {
			if found != nil {
				t.Fatalf("two Set-Cookie %s: %q", name, r.Header.Values("Set-Cookie"))
			}
			found = c
		}
	}
	return found
}
