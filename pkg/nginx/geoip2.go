package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// GeoIP2 (use-geoip2): the geoip2 module (Debian's
// libnginx-mod-http-geoip2) reads the MaxMind databases the user mounts in
// Options.GeoIPDir, under ingress-nginx's file names
// (config.GeoIP2Editions), and defines their $geoip2_* variables from the
// client address ($remote_addr, after the realip settings). nginx.conf
// holds a geoip2 block for each database found when it is rendered; a
// $geoip2_* variable that log-format-upstream uses and no database found
// defines is declared empty, so that a missing file never fails nginx -t
// nor holds back the other settings: it fails closed (empty values) and
// the reason is in nginx.conf and the syncer's log (view.Notes). Without
// use-geoip2, the module is not loaded and those variables are empty too.

// maxGeoIP2Reload bounds geoip2-autoreload-in-minutes (a week).
const maxGeoIP2Reload = 7 * 24 * 60

// geoIP2Block is one geoip2 block of nginx.conf: the database's path and
// its variable lines.
type geoIP2Block struct {
	File  string
	Lines []string
}

// logVarNameRe finds the variable names of a log format ($name, ${name}).
var logVarNameRe = regexp.MustCompile(`\$\{?([a-z0-9_]+)`)

// setGeoIP2 renders use-geoip2 with the databases of o.GeoIPDir, and the
// empty $geoip2_* variables the access log format needs.
func (v *view) setGeoIP2(o *Options, n *config.NginxSettings) error {
	defined := map[string]bool{}
	if g := n.GeoIP2; g.Enable {
		if g.AutoReloadMinutes < 0 || g.AutoReloadMinutes > maxGeoIP2Reload {
			return invalid("geoip2 autoreload in minutes", strconv.Itoa(g.AutoReloadMinutes))
		}
		v.GeoIP2 = geoIP2Blocks(o.GeoIPDir, g.AutoReloadMinutes, defined)
		v.GeoIP2Module = true
		if len(v.GeoIP2) == 0 {
			v.Notes = append(v.Notes, "use-geoip2: no MaxMind database in "+o.GeoIPDir+
				" (GeoLite2-City.mmdb, GeoLite2-Country.mmdb, GeoLite2-ASN.mmdb...): the $geoip2_* variables are empty")
		}
	}
	known := config.GeoIP2VariableNames()
	seen := map[string]bool{}
	for _, m := range logVarNameRe.FindAllStringSubmatch(n.LogFormatUpstream, -1) {
		name := m[1]
		if known[name] && !defined[name] && !seen[name] {
			seen[name] = true
			v.EmptyVariables = append(v.EmptyVariables, name)
		}
	}
	return nil
}

// geoIP2Blocks returns the blocks of the editions found in dir, each
// variable defined once (the first edition that has it), and adds their
// names to defined.
func geoIP2Blocks(dir string, reload int, defined map[string]bool) []geoIP2Block {
	var out []geoIP2Block
	for _, e := range config.GeoIP2Editions() {
		path := filepath.Join(dir, e.File)
		if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		b := geoIP2Block{File: path}
		if reload > 0 {
			b.Lines = append(b.Lines, "auto_reload "+strconv.Itoa(reload)+"m")
		}
		for _, gv := range e.Variables {
			if defined[gv.Name] {
				continue
			}
			defined[gv.Name] = true
			line := "$" + gv.Name + " source=$remote_addr"
			if gv.Default != "" {
				line += " default=" + gv.Default
			}
			b.Lines = append(b.Lines, line+" "+gv.Path)
		}
		if len(b.Lines) > 0 && !strings.HasPrefix(b.Lines[len(b.Lines)-1], "auto_reload") {
			out = append(out, b)
		}
	}
	return out
}
