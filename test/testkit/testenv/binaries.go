package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// EnvBinDir names the environment variable that overrides the folder holding
// the kube-apiserver and etcd binaries.
const EnvBinDir = "INGRESS_SYNC_CONTROLPLANE_DIR"

// ErrNoBinaries is returned when kube-apiserver or etcd cannot be found.
var ErrNoBinaries = errors.New("control-plane binaries missing: run make controlplane")

// BinDir returns the folder of the control-plane binaries: $EnvBinDir, or
// .cache/controlplane under the repository root found from the working
// directory.
func BinDir() (string, error) {
	if dir := os.Getenv(EnvBinDir); dir != "" {
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	root, err := RepoRoot(wd)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, ".cache", "controlplane"), nil
}

// RepoRoot walks up from dir to the first folder holding a go.mod.
func RepoRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
	}
}

// binaries returns the paths of etcd and kube-apiserver in dir, or
// ErrNoBinaries naming what is missing.
func binaries(dir string) (etcd, apiserver string, err error) {
	etcd = filepath.Join(dir, "etcd")
	apiserver = filepath.Join(dir, "kube-apiserver")
	for _, p := range []string{etcd, apiserver} {
		st, statErr := os.Stat(p)
		if statErr != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", "", fmt.Errorf("%w (%s not found)", ErrNoBinaries, p)
		}
	}
	return etcd, apiserver, nil
}

// BuildBinaries builds the watcher and syncer of the module that holds the
// working directory into dir (test/e2e and test/faults run them).
func BuildBinaries(dir string) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	root, err := RepoRoot(wd)
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-o", dir+"/", "./cmd/watcher", "./cmd/syncer")
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build binaries: %w", err)
	}
	return nil
}
