package nginx

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/lua"
)

// Prepare creates the directories under opts.Dir, writes the placeholder
// certificate nginx needs for its ssl listeners (self-signed, key 0600; a
// valid existing one is kept), installs the embedded Lua modules when
// opts.LuaDir is Dir/lua, and checks that workers running as another user
// can read the Lua modules. It is idempotent.
func Prepare(opts Options) error {
	o, err := opts.Complete()
	if err != nil {
		return err
	}
	for _, d := range []struct {
		path string
		mode fs.FileMode
	}{{o.Dir, 0o755}, {filepath.Join(o.Dir, "logs"), 0o755}, {filepath.Join(o.Dir, "tmp"), 0o755},
		{filepath.Join(o.Dir, "run"), 0o755}, {o.streamDir(), 0o755}, {filepath.Join(o.Dir, "certs"), 0o700}} {
		if err := os.MkdirAll(d.path, d.mode); err != nil {
			return fmt.Errorf("prepare nginx dir: %w", err)
		}
	}
	if err := ensurePlaceholderCert(o.certPath(), o.keyPath()); err != nil {
		return err
	}
	if o.embeddedLua() {
		if err := installLua(o.LuaDir); err != nil {
			return err
		}
	}
	if os.Geteuid() == 0 && o.User != "root" {
		return checkWorkerReadable(o.Dir, o.LuaDir)
	}
	return nil
}

// ensurePlaceholderCert keeps a loadable pair or writes a new one.
func ensurePlaceholderCert(certPath, keyPath string) error {
	if pair, err := tls.LoadX509KeyPair(certPath, keyPath); err == nil {
		if leaf, err := x509.ParseCertificate(pair.Certificate[0]); err == nil && time.Now().Before(leaf.NotAfter) {
			return nil
		}
	}
	certPEM, keyPEM, err := selfSigned("ingress-sync placeholder", 10*365*24*time.Hour)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(keyPath, keyPEM, 0o600); err != nil {
		return err
	}
	return writeFileAtomic(certPath, certPEM, 0o600)
}

// selfSigned returns a PEM certificate and key for commonName.
func selfSigned(commonName string, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	p, err := certs.Generate(certs.Options{CommonName: commonName, Validity: validity})
	if err != nil {
		return nil, nil, fmt.Errorf("placeholder certificate: %w", err)
	}
	return p.CertPEM, p.KeyPEM, nil
}

// installLua writes the embedded modules (0644, directories 0755), each
// atomically so that a worker never loads half a file.
func installLua(dir string) error {
	return fs.WalkDir(lua.Files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(path))
		if d.IsDir() {
			if err := os.MkdirAll(target, 0o755); err != nil {
				return fmt.Errorf("install lua: %w", err)
			}
			return os.Chmod(target, 0o755)
		}
		data, err := lua.Files.ReadFile(path)
		if err != nil {
			return fmt.Errorf("install lua: %w", err)
		}
		return writeFileAtomic(target, data, 0o644)
	})
}

// writeFileAtomic writes data to a temporary file in the same directory
// and renames it over path.
func writeFileAtomic(path string, data []byte, mode fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp, mode)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// checkWorkerReadable fails when workers running as an unprivileged user
// could not reach Dir (temp files) or read the Lua modules.
func checkWorkerReadable(dir, luaDir string) error {
	for _, d := range []string{dir, luaDir} {
		for p := d; ; p = filepath.Dir(p) {
			st, err := os.Stat(p)
			if err != nil {
				return fmt.Errorf("check %s: %w", p, err)
			}
			if st.Mode().Perm()&0o001 == 0 {
				return fmt.Errorf("%w: %s is not searchable by others; nginx workers run unprivileged and need o+x on every parent of %s", ErrInvalidOptions, p, d)
			}
			if p == "/" {
				break
			}
		}
	}
	return filepath.WalkDir(luaDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		need := fs.FileMode(0o004)
		if d.IsDir() {
			need = 0o005
		}
		if info.Mode().Perm()&need != need {
			return fmt.Errorf("%w: %s is not readable by others; nginx workers run unprivileged", ErrInvalidOptions, path)
		}
		return nil
	})
}
