package image

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
)

// Names of shell and tool histories.
var historyFile = regexp.MustCompile(`^\.(bash|sh|ash|zsh|python|mysql|psql|node_repl)_history$|^\.history$|^\.lesshst$|^\.viminfo$|^\.wget-hsts$`)

// A Go toolchain or its caches.
var goToolchain = regexp.MustCompile(`(^|/)(go|gofmt)$|(^|/)usr/local/go/|(^|/)go/pkg/(mod|tool)/|(^|/)\.cache/go-build/|(^|/)pkg/tool/linux_`)

// TestImageContents reads the image's file system (podman export) and its
// configuration: nothing under /root, no Go toolchain, no shell history;
// the Lua files of lua/ byte for byte at --lua-dir; every program the
// manifests run (commands, preStop, --nginx-binary) present and
// executable; the image's user the manifests' runAsUser.
func TestImageContents(t *testing.T) {
	pm := newPodman(t)
	img := pm.image()
	c := renderChart(t)
	syncerDep, watcherDep := c.deployment(t, syncerName), c.deployment(t, watcherName)

	ctr := pm.prefix + "contents"
	pm.must("create", "--name", ctr, img)
	t.Cleanup(func() { _, _ = pm.run(nil, "rm", "--force", ctr) })
	files := exportFS(t, pm, ctr)

	for name, f := range files {
		switch {
		case strings.HasPrefix(name, "root/") && name != "root/":
			t.Errorf("/%s: the image has something under /root", name)
		case historyFile.MatchString(path.Base(strings.TrimSuffix(name, "/"))):
			t.Errorf("/%s: a shell or tool history", name)
		case goToolchain.MatchString(strings.TrimSuffix(name, "/")) && (f.typ == tar.TypeReg || f.typ == tar.TypeDir || f.typ == tar.TypeSymlink):
			t.Errorf("/%s: a Go toolchain or cache", name)
		}
	}

	// Every program the manifests run.
	var programs []string
	luaDir := ""
	for _, d := range []string{syncerName, watcherName} {
		dep := syncerDep
		if d == watcherName {
			dep = watcherDep
		}
		for _, ctr := range dep.Spec.Template.Spec.Containers {
			programs = append(programs, ctr.Command[0])
			if l := ctr.Lifecycle; l != nil && l.PreStop != nil && l.PreStop.Exec != nil {
				programs = append(programs, l.PreStop.Exec.Command[0])
			}
			for _, a := range ctr.Args {
				if v, ok := strings.CutPrefix(a, "--nginx-binary="); ok {
					programs = append(programs, v)
				}
				if v, ok := strings.CutPrefix(a, "--lua-dir="); ok {
					luaDir = v
				}
			}
		}
	}
	for _, p := range programs {
		f, ok := resolve(files, strings.TrimPrefix(p, "/"))
		if !ok || f.typ != tar.TypeReg || f.mode&0o001 == 0 {
			t.Errorf("%s, which the manifests run, is not an executable file of the image", p)
		}
	}

	// The Lua files, as in the repository.
	if luaDir == "" {
		t.Fatal("the syncer pod passes no --lua-dir")
	}
	root, err := testenv.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	err = filepath.WalkDir(filepath.Join(root, "lua"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".go") {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(root, "lua"), p)
		want[rel], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	prefix := strings.Trim(luaDir, "/") + "/"
	for name, f := range files {
		rel, ok := strings.CutPrefix(name, prefix)
		if !ok || f.typ != tar.TypeReg {
			continue
		}
		if w, ok := want[rel]; !ok {
			t.Errorf("/%s is in the image and not in lua/", name)
		} else if !bytes.Equal(w, f.data) {
			t.Errorf("/%s differs from lua/%s: make image builds from this tree", name, rel)
		}
		delete(want, rel)
	}
	for rel := range want {
		t.Errorf("lua/%s is missing from the image's %s", rel, luaDir)
	}

	// The image's user is the manifests'.
	user := pm.must("image", "inspect", "--format", "{{.Config.User}}", img)
	ps := syncerDep.Spec.Template.Spec.SecurityContext
	if want := strings.Join([]string{strconv.FormatInt(*ps.RunAsUser, 10), strconv.FormatInt(*ps.RunAsGroup, 10)}, ":"); user != want {
		t.Errorf("the image's USER is %q, the manifests run as %s", user, want)
	}
	size := pm.must("image", "inspect", "--format", "{{.Size}}", img)
	t.Logf("image %s: %s bytes, %d files", img, size, len(files))
}

type file struct {
	typ  byte
	mode int64
	link string
	data []byte // of regular files under the Lua folder only
}

// exportFS reads the file system of container ctr.
func exportFS(t *testing.T, pm *podman, ctr string) map[string]*file {
	t.Helper()
	cmd := exec.Command("podman", "export", ctr)
	cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+pm.conf)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	files := map[string]*file{}
	tr := tar.NewReader(out)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("podman export: %v", err)
		}
		name := strings.TrimPrefix(h.Name, "./")
		if h.Typeflag == tar.TypeDir && !strings.HasSuffix(name, "/") {
			name += "/"
		}
		f := &file{typ: h.Typeflag, mode: h.Mode, link: h.Linkname}
		if h.Typeflag == tar.TypeReg && strings.HasPrefix(name, "usr/share/ingress-sync/") {
			if f.data, err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
		files[name] = f
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("podman export: %v\n%s", err, stderr.String())
	}
	return files
}

// resolve follows symbolic links (as Debian's /bin -> usr/bin) to a file.
func resolve(files map[string]*file, name string) (*file, bool) {
	for range 10 {
		// A link among the parent folders.
		parts := strings.Split(name, "/")
		for i := 1; i < len(parts); i++ {
			dir := strings.Join(parts[:i], "/")
			if f, ok := files[dir]; ok && f.typ == tar.TypeSymlink {
				name = path.Join(linkTarget(dir, f.link), strings.Join(parts[i:], "/"))
				parts = nil
				break
			}
		}
		if parts == nil {
			continue
		}
		f, ok := files[name]
		if !ok || f.typ != tar.TypeSymlink {
			return f, ok
		}
		name = linkTarget(name, f.link)
	}
	return nil, false
}

func linkTarget(name, link string) string {
	if strings.HasPrefix(link, "/") {
		return strings.TrimPrefix(path.Clean(link), "/")
	}
	return path.Clean(path.Join(path.Dir(name), link))
}
