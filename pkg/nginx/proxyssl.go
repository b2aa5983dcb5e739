package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Backend TLS profiles (config.UpstreamTLS). nginx's proxy_ssl_* and
// grpc_ssl_* directives but proxy_ssl_name take no variables, so each
// profile is a copy of the https and grpcs proxy locations (every
// buffering, request buffering, HTTP version and error interception
// variant: 27 locations) named "<location>_<profile>", with the profile's
// directives and its own upstream block, "upstream_<profile>" (the same
// balancer): kept-alive connections, verified or presenting a client
// certificate, are never shared with another profile or with the
// unverified backends. The only values of a profile in nginx.conf are the
// syncer's: the profile name (a hash), the CA and client certificate files
// it writes under Dir/certs (named by the profile), the TLS versions and
// the cipher list (validated constants). proxy_ssl_name is the route's,
// through $ingress_proxy_ssl_name (lua/router.lua); with verify or SNI on,
// each name is a profile of its own (config.UpstreamTLS.PeerName): a pooled
// connection is only reused for the name it was opened (and verified) with.

// profileNameRe is the form of config.UpstreamTLS.Name.
var profileNameRe = regexp.MustCompile(`^t[0-9a-f]{16}$`)

// maxProfiles bounds what the renderer takes.
const maxProfiles = config.MaxUpstreamTLSProfilesLimit

// profileFile is the path of a profile's file: "ca", "cert" or "key".
func (o *Options) profileFile(profile, kind string) string {
	return filepath.Join(o.Dir, "certs", "upstream-"+profile+"-"+kind+".pem")
}

// setUpstreamTLS adds the locations and upstreams of the profiles, after
// validating each value again.
func (v *view) setUpstreamTLS(o *Options, list []config.UpstreamTLS) error {
	if len(list) > maxProfiles {
		return invalid("backend TLS profiles", strconv.Itoa(len(list)))
	}
	base := slices.Clone(v.ProxyLocations)
	names := make([]string, 0, len(list))
	for i := range list {
		p := &list[i]
		directives, err := profileDirectives(o, p)
		if err != nil {
			return err
		}
		upstream := "upstream_" + p.Name
		for _, l := range base {
			module, pass, ok := tlsPass(l)
			if !ok {
				continue
			}
			loc := proxyLocation{Name: l.Name + "_" + p.Name, Lua: l.Lua}
			for _, d := range l.Directives {
				if d != pass {
					loc.Directives = append(loc.Directives, d)
				}
			}
			for _, d := range directives {
				loc.Directives = append(loc.Directives, module+"_ssl_"+d)
			}
			scheme := "https://"
			if module == "grpc" {
				scheme = "grpcs://"
			}
			loc.Directives = append(loc.Directives, module+"_pass "+scheme+upstream)
			v.ProxyLocations = append(v.ProxyLocations, loc)
		}
		v.TLSUpstreams = append(v.TLSUpstreams, upstream)
		names = append(names, "["+luaString(p.Name)+"] = true")
	}
	v.LuaTLSProfiles = "{" + strings.Join(names, ", ") + "}"
	return nil
}

// tlsPass reports whether l is one of the https or grpcs variants a
// profile copies ("@https_b..." and "@grpcs_i...", not @https or @grpcs):
// its module and its pass directive.
func tlsPass(l proxyLocation) (module, pass string, ok bool) {
	switch {
	case strings.HasPrefix(l.Name, "@https_b"):
		return "proxy", "proxy_pass https://upstream_balancer", true
	case strings.HasPrefix(l.Name, "@grpcs_i"):
		return "grpc", "grpc_pass grpcs://upstream_balancer", true
	}
	return "", "", false
}

// profileDirectives returns the directives of p, without their
// "proxy_ssl_" or "grpc_ssl_" prefix.
func profileDirectives(o *Options, p *config.UpstreamTLS) ([]string, error) {
	protocols, perr := config.ParseProxySSLProtocols(p.Protocols)
	ciphers, cerr := config.ParseProxySSLCiphers(p.Ciphers)
	switch {
	case !profileNameRe.MatchString(p.Name):
		return nil, invalid("backend TLS profile name", p.Name)
	case perr != nil || protocols != p.Protocols:
		return nil, invalid("backend TLS protocols", p.Protocols)
	case cerr != nil:
		return nil, invalid("backend TLS ciphers", p.Ciphers)
	case p.VerifyDepth < 1 || p.VerifyDepth > 100:
		return nil, invalid("backend TLS verify depth", strconv.Itoa(p.VerifyDepth))
	case p.Verify && len(p.CA) == 0 && !p.SystemCA, len(p.Cert) == 0 != (len(p.Key) == 0), p.SystemCA && len(p.CA) > 0:
		return nil, invalid("backend TLS profile", p.Name)
	}
	if _, err := config.ParseProxySSLName(p.PeerName); p.PeerName != "" && err != nil {
		return nil, invalid("backend TLS peer name", p.PeerName) // not rendered: the profile's identity only
	}
	out := []string{
		"protocols " + protocols,
		"ciphers " + ciphers,
		"server_name " + onOff(p.ServerName),
		"name $ingress_ssl_name",
		"verify " + onOff(p.Verify),
		"verify_depth " + strconv.Itoa(p.VerifyDepth),
	}
	switch {
	case len(p.CA) > 0:
		out = append(out, "trusted_certificate "+o.profileFile(p.Name, "ca"))
	case p.SystemCA:
		out = append(out, "trusted_certificate "+o.SystemCAFile)
	}
	if len(p.Cert) > 0 {
		out = append(out, "certificate "+o.profileFile(p.Name, "cert"), "certificate_key "+o.profileFile(p.Name, "key"))
	}
	return out, nil
}

// profileSet returns the names of list (hashes of their content).
func profileSet(list []config.UpstreamTLS) map[string]bool {
	m := make(map[string]bool, len(list))
	for i := range list {
		m[list[i].Name] = true
	}
	return m
}

// hasProfiles reports whether the running nginx.conf holds (or refused)
// every profile of list: then list needs no reload.
func (a *Applier) hasProfiles(list []config.UpstreamTLS) bool {
	for i := range list {
		if !a.profiles[list[i].Name] {
			return false
		}
	}
	return true
}

// writeProfiles writes the files of the profiles that are not there yet
// (a file's name is its content's hash): CA and certificate 0644, key
// 0600, under Dir/certs (0700).
func (a *Applier) writeProfiles(list []config.UpstreamTLS) error {
	for i := range list {
		p := &list[i]
		if !profileNameRe.MatchString(p.Name) {
			return invalid("backend TLS profile name", p.Name)
		}
		for _, f := range []struct {
			kind string
			data []byte
			mode os.FileMode
		}{{"ca", p.CA, 0o644}, {"cert", p.Cert, 0o644}, {"key", p.Key, 0o600}} {
			path := a.opts.profileFile(p.Name, f.kind)
			if len(f.data) == 0 {
				continue
			}
			if old, err := os.ReadFile(path); err == nil && string(old) == string(f.data) {
				continue
			}
			if err := writeFileAtomic(path, f.data, f.mode); err != nil {
				return err
			}
		}
	}
	return nil
}

// removeStaleProfiles removes the files of profiles that list (nginx.conf
// now running) does not use.
func (a *Applier) removeStaleProfiles(list []config.UpstreamTLS) {
	dir := filepath.Join(a.opts.Dir, "certs")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	keep := map[string]bool{}
	for i := range list {
		keep[list[i].Name] = true
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "upstream-")
		if !ok || len(rest) < 17 || keep[rest[:17]] {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			a.log.Warn("removing a backend TLS file", "file", e.Name(), "err", err)
		}
	}
}

// testConf writes the files of cfg's profiles and tests conf, rendered for
// cfg. When nginx -t fails and cfg has profiles, each profile is tested on
// its own, and those nginx refuses are left out of nginx.conf (their
// routes answer 503, lua/router.lua): one Ingress's profile never holds
// back the changes of the others. It returns the nginx.conf to install.
func (a *Applier) testConf(ctx context.Context, cfg *config.Configuration, conf []byte, sum string) ([]byte, string, error) {
	if err := a.writeProfiles(cfg.UpstreamTLS); err != nil {
		return nil, "", err
	}
	err := a.test(ctx, conf)
	if err == nil || len(cfg.UpstreamTLS) == 0 || !errors.Is(err, ErrConfigTest) {
		return conf, sum, err
	}
	base, _, berr := a.renderer.render(cfg, nil)
	if berr != nil || a.test(ctx, base) != nil {
		return nil, "", err // not a profile's fault
	}
	var good []config.UpstreamTLS
	for _, p := range cfg.UpstreamTLS {
		one, _, rerr := a.renderer.render(cfg, []config.UpstreamTLS{p})
		if rerr == nil {
			if terr := a.test(ctx, one); terr != nil {
				a.log.Error("nginx refuses a backend TLS profile; its routes answer 503", "profile", p.Name, "err", terr)
				continue
			}
		}
		good = append(good, p)
	}
	if len(good) == len(cfg.UpstreamTLS) {
		return nil, "", err
	}
	conf, sum, err = a.renderer.render(cfg, good)
	if err != nil {
		return nil, "", err
	}
	if err := a.test(ctx, conf); err != nil {
		return nil, "", fmt.Errorf("without the refused backend TLS profiles: %w", err)
	}
	return conf, sum, nil
}
