package deploy

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// repoRoot is the repository seen from this package.
var repoRoot = filepath.Join("..", "..")

// TestDockerfile reads deploy/Dockerfile and checks it against the
// manifests and the test machine (test/image builds and runs the image): the
// builder and base images (build arguments, by default golang and
// debian-slim), a static trimmed build of exactly the binaries the
// manifests run, the nginx and Lua packages hack/install-nginx.sh installs
// for the tests, the Lua folder of --lua-dir, and the user of runAsUser.
func TestDockerfile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(deployDir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	df := string(data)
	objs := render(t, "base")
	for _, want := range []string{
		"ARG GO_VERSION=1.26\n", "ARG DEBIAN_RELEASE=bookworm\n",
		"ARG GO_IMAGE=golang:${GO_VERSION}-${DEBIAN_RELEASE}\n", "ARG BASE_IMAGE=debian:${DEBIAN_RELEASE}-slim\n",
		"FROM ${GO_IMAGE} AS build\n", "FROM ${BASE_IMAGE}\n",
		"CGO_ENABLED=0 go build -trimpath", "apt-get install -y --no-install-recommends",
		"rm -rf /var/lib/apt/lists/*", "COPY --from=build /out/lua/ /usr/share/ingress-sync/lua/",
	} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	for _, pkg := range installScriptPackages(t) {
		if !regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(pkg) + ` \\$`).MatchString(df) {
			t.Errorf("Dockerfile does not install %s, which the tests run on", pkg)
		}
	}
	for _, w := range workloads(t, objs) {
		if w.Name == natsName {
			continue
		}
		for _, c := range w.Template.Spec.Containers {
			bin := c.Command[0]
			if !strings.Contains(df, "./cmd/"+path.Base(bin)) || !strings.Contains(df, "/out/bin/"+path.Base(bin)) ||
				path.Dir(bin) != "/usr/local/bin" {
				t.Errorf("%s/%s runs %s, which the Dockerfile does not build into /usr/local/bin", w, c.Name, bin)
			}
		}
		user := strconv.FormatInt(deref(w.Template.Spec.SecurityContext.RunAsUser, -1), 10)
		if !strings.Contains(df, "\nUSER "+user+":"+user+"\n") {
			t.Errorf("%s runs as %s, the image's USER differs", w, user)
		}
		if w.Name == syncerName && flagValue(t, container(t, w, "syncer"), "lua-dir") != "/usr/share/ingress-sync/lua" {
			t.Errorf("--lua-dir is not where the Dockerfile puts lua/")
		}
	}
}

// installScriptPackages is the packages=(...) list of hack/install-nginx.sh.
func installScriptPackages(t *testing.T) []string {
	data, err := os.ReadFile(filepath.Join(repoRoot, "hack", "install-nginx.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^packages=\(([^)]*)\)`).FindSubmatch(data)
	if m == nil {
		t.Fatal("hack/install-nginx.sh has no packages=(...)")
	}
	return strings.Fields(string(m[1]))
}

// TestFlagsExist builds cmd/watcher and cmd/syncer and checks that every
// flag the manifests pass is one the binary defines (from its -h output):
// the watcher's, and those of `syncer run` and `syncer nginx` in the two
// containers of the syncer pod.
func TestFlagsExist(t *testing.T) {
	objs := render(t, "base")
	for _, wc := range []struct{ workload, container string }{
		{watcherName, "watcher"}, {syncerName, "syncer"}, {syncerName, "nginx"},
	} {
		c := container(t, workloadNamed(t, objs, wc.workload), wc.container)
		usage := binaryUsage(t, path.Base(c.Command[0]), c.Command[1:])
		for _, flag := range argFlags(t, c) {
			if !regexp.MustCompile(`(?m)^\s+-` + regexp.QuoteMeta(flag) + `(\s|$)`).MatchString(usage) {
				t.Errorf("%s/%s passes --%s, which %s does not define", wc.workload, wc.container, flag,
					strings.Join(c.Command, " "))
			}
		}
	}
}

// argFlags returns the flag names of c's args, which must all be --name=value.
func argFlags(t *testing.T, c corev1.Container) []string {
	var flags []string
	for _, a := range c.Args {
		name, _, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !ok || !strings.HasPrefix(a, "--") {
			t.Errorf("%s: argument %q is not --name=value", c.Name, a)
			continue
		}
		flags = append(flags, name)
	}
	slices.Sort(flags)
	return flags
}

// binaryUsage builds ./cmd/<name> and returns what "<name> <sub...> -h"
// prints.
func binaryUsage(t *testing.T, name string, sub []string) string {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), name)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, goBin, "build", "-o", bin, "./cmd/"+name)
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/%s: %v\n%s", name, err, out)
	}
	ctx, cancel = context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	// -h exits non-zero; the usage is what matters.
	out, _ := exec.CommandContext(ctx, bin, append(slices.Clone(sub), "-h")...).CombinedOutput()
	if !strings.Contains(string(out), "-") {
		t.Fatalf("%s -h printed no usage: %s", name, out)
	}
	return fmt.Sprint(string(out))
}
