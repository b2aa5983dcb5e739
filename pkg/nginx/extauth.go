package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"
)

// External auth (lua/extauth.lua): nginx.conf holds one fixed internal
// location, /_ingress_auth, that proxies the auth request to the URL the
// Lua code puts in $ingress_auth_url, with the timeouts of AuthTimeout
// (never unbounded), and the shared dict of the auth cache. A host name in
// an auth URL is resolved by nginx's resolver: Resolvers (by default, the
// nameservers of /etc/resolv.conf, see DefaultResolvers). None of this
// depends on an Ingress.

// Defaults of the external auth options.
const (
	DefaultAuthCacheDictSize = config.Size("10m")
	DefaultAuthTimeout       = 60 * time.Second
	// maxAuthConnectTimeout is ingress-nginx's default proxy-connect-timeout.
	maxAuthConnectTimeout = 5 * time.Second
)

// DefaultResolvers returns the nameservers of resolv.conf (a file in
// resolv.conf(5) format), IP addresses only; nil when it has none.
func DefaultResolvers(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "nameserver" {
			if a, err := netip.ParseAddr(f[1]); err == nil && a.Zone() == "" {
				out = append(out, a.String())
			}
		}
	}
	return out
}

func (o *Options) extAuthDefaults() {
	setDefault(&o.AuthCacheDictSize, DefaultAuthCacheDictSize)
	setDefault(&o.AuthTimeout, DefaultAuthTimeout)
}

func (o *Options) validateExtAuth() []error {
	var errs []error
	if _, err := nginxSize(o.AuthCacheDictSize); err != nil || o.AuthCacheDictSize == "0" {
		errs = append(errs, fmt.Errorf("AuthCacheDictSize %q is not a positive nginx size", o.AuthCacheDictSize))
	}
	if o.AuthTimeout < time.Millisecond || o.AuthTimeout > time.Hour {
		errs = append(errs, fmt.Errorf("AuthTimeout %s must be between 1ms and 1h", o.AuthTimeout))
	}
	if len(o.Resolvers) > 16 {
		errs = append(errs, fmt.Errorf("at most 16 Resolvers"))
	}
	for _, r := range o.Resolvers {
		if _, err := resolverAddr(r); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// resolverAddr returns a resolver ("address" or "address:port", IPv6 in
// brackets with a port) as nginx's resolver directive takes it.
func resolverAddr(r string) (string, error) {
	if a, err := netip.ParseAddr(r); err == nil && a.Zone() == "" {
		if a.Is6() && !a.Is4In6() {
			return "[" + a.String() + "]", nil
		}
		return a.Unmap().String(), nil
	}
	if ap, err := netip.ParseAddrPort(r); err == nil && ap.Addr().Zone() == "" && ap.Port() != 0 {
		return ap.String(), nil
	}
	return "", fmt.Errorf("Resolver %q is not an IP address with an optional port", r)
}

// setExtAuth sets the view's external auth settings from validated options.
func (v *view) setExtAuth(o *Options) {
	v.AuthCacheDictSize, _ = nginxSize(o.AuthCacheDictSize)
	v.AuthTimeout = nginxMillis(o.AuthTimeout)
	v.AuthConnectTimeout = nginxMillis(min(o.AuthTimeout, maxAuthConnectTimeout))
	var rs []string
	for _, r := range o.Resolvers {
		if a, err := resolverAddr(r); err == nil { // validated
			rs = append(rs, a)
		}
	}
	v.Resolver = strings.Join(rs, " ")
}

func nginxMillis(d time.Duration) string {
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}
