package deploy

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// envHelm names the environment variable that points at the helm binary;
// the Makefile sets it to .cache/bin/helm, built by `make helm`.
const envHelm = "INGRESS_SYNC_HELM"

// helmTimeout bounds one helm command.
const helmTimeout = 2 * time.Minute

// helmRelease is the release name and namespace of every render: with
// them the chart's names are deploy/base's.
const helmRelease = "ingress-sync"

// chartDir is the chart seen from this package.
var chartDir = filepath.Join(deployDir, "helm", "ingress-sync")

// helmValues are the values files of test/deploy/testdata/helm, by name
// ("" is the chart's defaults).
var helmValues = []string{"", "dev", "tls", "encryption", "ingress-nginx", "external-nats", "admission"}

// helmBinary returns the helm that `make helm` built, failing the test
// (never skipping) when it is missing or of another version than
// hack/helm/build.sh builds.
func helmBinary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv(envHelm)
	if bin == "" {
		bin = filepath.Join(repoRoot, ".cache", "bin", "helm")
	}
	if st, err := os.Stat(bin); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		t.Fatalf("helm not found at %s: run make helm", bin)
	}
	script, err := os.ReadFile(filepath.Join(repoRoot, "hack", "helm", "build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^helm_version=(\S+)$`).FindSubmatch(script)
	if m == nil {
		t.Fatal("hack/helm/build.sh has no helm_version=")
	}
	out, err := runHelm(t, bin, "version", "--template", "{{.Version}}")
	if err != nil || strings.TrimSpace(out) != string(m[1]) {
		t.Fatalf("%s is version %q (%v), hack/helm/build.sh builds %s: run make helm", bin, out, err, m[1])
	}
	return bin
}

// runHelm runs helm with args and returns its stdout; the error carries
// its stderr.
func runHelm(t testing.TB, bin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), helmTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(),
		"HELM_DATA_HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), &helmError{args: args, err: err, stderr: stderr.String()}
	}
	return stdout.String(), nil
}

type helmError struct {
	args   []string
	err    error
	stderr string
}

func (e *helmError) Error() string {
	return "helm " + strings.Join(e.args, " ") + ": " + e.err.Error() + "\n" + e.stderr
}

// valuesArgs returns the -f arguments of the named values files.
func valuesArgs(names ...string) []string {
	var args []string
	for _, n := range names {
		if n != "" {
			args = append(args, "-f", filepath.Join("testdata", "helm", n+".yaml"))
		}
	}
	return args
}

// helmTemplate renders the chart as release ingress-sync in the namespace
// ingress-sync with the named values files and --set values.
func helmTemplate(t testing.TB, values []string, set ...string) ([]*unstructured.Unstructured, error) {
	t.Helper()
	args := append([]string{"template", helmRelease, chartDir, "--namespace", namespace}, valuesArgs(values...)...)
	for _, s := range set {
		args = append(args, "--set", s)
	}
	out, err := runHelm(t, helmBinary(t), args...)
	if err != nil {
		return nil, err
	}
	return DecodeObjects("helm template", []byte(out))
}

// renderChart renders the chart with one values file ("" for the
// defaults), or fails the test.
func renderChart(t testing.TB, values string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := helmTemplate(t, []string{values})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) == 0 {
		t.Fatalf("chart with %q renders no objects", values)
	}
	return objs
}

// withNamespace puts deploy/base's Namespace in front of objs: docs/deploy.md
// creates it from deploy/base/namespace.yaml before `helm upgrade --install`.
func withNamespace(t testing.TB, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	ns, err := ReadObjects(filepath.Join(deployDir, "base", "namespace.yaml"))
	if err != nil || len(ns) != 1 {
		t.Fatalf("deploy/base/namespace.yaml: %v (%d objects)", err, len(ns))
	}
	return append(ns, objs...)
}

// TestHelmLint: helm lint --strict passes with the chart's defaults and with
// every values file of testdata/helm.
func TestHelmLint(t *testing.T) {
	bin := helmBinary(t)
	for _, v := range helmValues {
		t.Run("values="+v, func(t *testing.T) {
			args := append([]string{"lint", "--strict", chartDir}, valuesArgs(v)...)
			if out, err := runHelm(t, bin, args...); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
		})
	}
}

// TestHelmRefuses: values that cannot work fail the render with a message
// that names the value to use instead.
func TestHelmRefuses(t *testing.T) {
	cases := []struct{ set, want string }{
		{"controller.extraArgs.ingress-class=nginx", "the chart sets this flag; use controller.ingressClass"},
		{"controller.extraArgs.nats-url=nats://x:4222", "the chart sets this flag; use nats.external.url"},
		{"watcher.extraArgs.election-id=x", "the chart sets this flag; use controller.electionID"},
		{"controller.extraArgs.enable-opentracing=true", "neither the watcher nor the syncer has this flag"},
		{"watcher.extraArgs.enable-ssl-passthrough=true", "not a flag of the watcher"},
		{"controller.hostNetwork=true", "breaks the restricted Pod Security level"},
		{"controller.hostPort.enabled=true", "breaks the restricted Pod Security level"},
		{"controller.kind=DaemonSet", "the chart runs the syncers as a Deployment"},
		{"controller.image.tag=v1.15.1", "ingress-sync has its own image"},
		{"tcp.8080=a/b:80", "a port of the syncer's own listeners"},
		{"tcp.ssh=a/b:22", "the key must be a port number"},
		{"nats.external.url=nats://nats.example:4222", "stream.replicas: required with nats.external.url"},
		{"controller.metrics.serviceMonitor.enabled=true", "needs controller.metrics.enabled"},
	}
	for _, c := range cases {
		t.Run(c.set, func(t *testing.T) {
			_, err := helmTemplate(t, nil, c.set)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("--set %s: %v, want an error with %q", c.set, err, c.want)
			}
		})
	}
}

// chartFlags is flags.yaml of the chart.
type chartFlags struct {
	Watcher []string          `json:"watcher"`
	Syncer  []string          `json:"syncer"`
	Nginx   []string          `json:"nginx"`
	Chart   map[string]string `json:"chart"`
}

func readChartFlags(t *testing.T) chartFlags {
	data, err := os.ReadFile(filepath.Join(chartDir, "flags.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var f chartFlags
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		t.Fatalf("flags.yaml: %v", err)
	}
	return f
}

// TestHelmFlags: flags.yaml lists exactly the flags of the watcher, of
// `syncer run` and of `syncer nginx` (from their -h), so controller.extraArgs
// reaches the right components; every flag the chart passes on its own is in
// its chart map, so controller.extraArgs cannot override it.
func TestHelmFlags(t *testing.T) {
	f := readChartFlags(t)
	usageFlags := regexp.MustCompile(`(?m)^\s+-([a-z][a-z0-9-]*)`)
	for _, l := range []struct {
		key, binary string
		sub, listed []string
	}{
		{"watcher", "watcher", nil, f.Watcher},
		{"syncer", "syncer", []string{"run"}, f.Syncer},
		{"nginx", "syncer", []string{"nginx"}, f.Nginx},
	} {
		var got []string
		for _, m := range usageFlags.FindAllStringSubmatch(binaryUsage(t, l.binary, l.sub), -1) {
			got = append(got, m[1])
		}
		slices.Sort(got)
		if !slices.Equal(got, l.listed) {
			t.Errorf("flags.yaml %s: %v\n%s -h: %v", l.key, l.listed, strings.Join(append([]string{l.binary}, l.sub...), " "), got)
		}
	}
	for flag := range f.Chart {
		if !slices.Contains(f.Watcher, flag) && !slices.Contains(f.Syncer, flag) && !slices.Contains(f.Nginx, flag) {
			t.Errorf("flags.yaml chart: %s is a flag of neither binary", flag)
		}
	}
	for _, v := range []string{"", "dev", "tls", "external-nats"} {
		for _, w := range workloads(t, renderChart(t, v)) {
			for _, c := range w.Template.Spec.Containers {
				for _, flag := range argFlags(t, c) {
					if w.Name != natsName && f.Chart[flag] == "" {
						t.Errorf("values %q: %s passes --%s, which flags.yaml's chart map lacks", v, w, flag)
					}
				}
			}
		}
	}
}
