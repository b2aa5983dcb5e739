package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// writeCityDB writes a MaxMind database of type GeoLite2-City, made here,
// whose only network is 127.0.0.0/8 (a reserved network, which the writer
// takes only when asked): the city "Loopback", country XL.
func writeCityDB(t *testing.T, path string) {
	t.Helper()
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: "GeoLite2-City", RecordSize: 24, IncludeReservedNetworks: true})
	if err != nil {
		t.Fatal(err)
	}
	names := func(en string) mmdbtype.Map { return mmdbtype.Map{"en": mmdbtype.String(en)} }
	record := mmdbtype.Map{
		"city":      mmdbtype.Map{"geoname_id": mmdbtype.Uint32(42), "names": names("Loopback")},
		"country":   mmdbtype.Map{"iso_code": mmdbtype.String("XL"), "names": names("Loopland")},
		"continent": mmdbtype.Map{"code": mmdbtype.String("LO"), "names": names("Localia")},
		"location":  mmdbtype.Map{"latitude": mmdbtype.Float64(1.5), "longitude": mmdbtype.Float64(-2.25), "time_zone": mmdbtype.String("Etc/UTC")},
	}
	_, loopback, _ := net.ParseCIDR("127.0.0.0/8")
	if err := tree.Insert(loopback, record); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestGeoIP2: use-geoip2 with a City database made by the test: the
// $geoip2_* variables of ingress-nginx's City block reach the access log
// (log-format-upstream) with the client's values; a variable of a database
// that is not there (ASN) is empty, and so is every $geoip2_* variable
// without use-geoip2 or without any database: nginx -t passes and the
// reason is in nginx.conf.
func TestGeoIP2(t *testing.T) {
	e := startEcho(t, "web")
	dir := t.TempDir()
	writeCityDB(t, filepath.Join(dir, "GeoLite2-City.mmdb"))
	format := `geo city=$geoip2_city cc=$geoip2_city_country_code lat=$geoip2_latitude tz=${geoip2_time_zone} asn=$geoip2_asn uri=$request_uri`
	tests := []struct {
		name   string
		use    bool
		dir    string
		want   string
		reason string // in nginx.conf
	}{
		{"a City database", true, dir, "geo city=Loopback cc=XL lat=1.50000 tz=Etc/UTC asn= uri=/", ""},
		{"no database", true, t.TempDir(), "geo city= cc= lat= tz= asn= uri=/", "# not applied: use-geoip2: no MaxMind database in "},
		{"use-geoip2 off", false, dir, "geo city= cc= lat= tz= asn= uri=/", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := hostTable(1, endpointOf(e))
			cfg.Global.Nginx = config.DefaultGlobal().Nginx
			cfg.Global.Nginx.LogFormatUpstream = format
			cfg.Global.Nginx.GeoIP2 = config.GeoIP2Settings{Enable: tc.use, AutoReloadMinutes: 5}
			stdout := &syncBuffer{}
			h := startNginx(t, cfg, func(o *Options) { o.Stdout, o.GeoIPDir = stdout, tc.dir })
			checkServed(t, h, "http://"+tableHost(0)+"/", 200, "web")
			waitFor(t, "the access log line", func() bool { return strings.Contains(stdout.String(), "uri=/") })
			if got := strings.TrimSpace(stdout.String()); got != tc.want {
				t.Errorf("access log %q, want %q", got, tc.want)
			}
			conf, _ := os.ReadFile(h.opts.confPath())
			if tc.reason != "" && !strings.Contains(string(conf), tc.reason) {
				t.Errorf("nginx.conf does not say %q", tc.reason)
			}
			if loaded := strings.Contains(string(conf), "ngx_http_geoip2_module.so"); loaded != tc.use {
				t.Errorf("geoip2 module loaded: %v, want %v", loaded, tc.use)
			}
		})
	}
}
