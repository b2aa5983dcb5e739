package deploy

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/nginx"
)

// TestSyncerLogsOnStdout: in every kustomization the syncer pod writes no
// log onto a volume. It mounts nothing under /var/log, the image prepares
// no log directory, and the nginx.conf its flags render (with the
// ConfigMap's defaults) sends the access log to stdout and the error log
// to stderr, which the kubelet collects and rotates.
func TestSyncerLogsOnStdout(t *testing.T) {
	for _, dir := range kustomizations {
		w := workloadNamed(t, render(t, dir), syncerName)
		for _, c := range w.Template.Spec.Containers {
			for _, m := range c.VolumeMounts {
				if strings.HasPrefix(m.MountPath, "/var/log") || strings.Contains(m.Name, "log") {
					t.Errorf("%s: %s/%s mounts %s at %s: logs go to stdout and stderr", dir, w, c.Name, m.Name, m.MountPath)
				}
			}
		}
		c := container(t, w, "syncer")
		r, err := nginx.NewRenderer(nginx.Options{Dir: flagValue(t, c, "nginx-dir"), LuaDir: flagValue(t, c, "lua-dir"),
			HTTPPort: 8080, HTTPSPort: 8443, StatusPort: 10246, NginxBinary: flagValue(t, c, "nginx-binary")})
		if err != nil {
			t.Fatal(err)
		}
		conf, err := r.Render(&config.Configuration{Global: config.DefaultGlobal()})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`(?m)^\s*(access_log|error_log) (\S+)`).FindAllStringSubmatch(string(conf), -1) {
			if ok := map[string]bool{"/dev/stdout": true, "stderr": true, "off;": true}[m[2]]; !ok {
				t.Errorf("%s: nginx.conf has %s %s: a file in the pod", dir, m[1], m[2])
			}
		}
	}
	df, err := os.ReadFile(filepath.Join(deployDir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	// Removing apt's and dpkg's logs of the build is fine; making, owning
	// or linking anything there is not.
	if m := regexp.MustCompile(`(?m)\b(mkdir|install|chown|chmod|ln|touch)\b[^\n]*/var/log`).FindString(string(df)); m != "" {
		t.Errorf("the Dockerfile prepares /var/log (%q): nothing writes there", m)
	}
}
