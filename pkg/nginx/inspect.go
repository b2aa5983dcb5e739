package nginx

import (
	"bytes"
	"context"
	"path/filepath"
)

// GetCertificateChains is GetCertificates with the PEM chain of every
// certificate (never its key), for `syncer certs`.
func (c *Client) GetCertificateChains(ctx context.Context) (Certificates, error) {
	var out Certificates
	err := c.get(ctx, "/configuration/certs?pem=1", false, &out)
	return out, err
}

// GetGeneral returns the settings nginx.conf passed to the Lua side
// (configuration.init: the nginx.conf checksum, max_tries, https_port,
// body_size...), for `syncer general`.
func (c *Client) GetGeneral(ctx context.Context) (map[string]any, error) {
	var out map[string]any
	err := c.get(ctx, "/configuration/general", false, &out)
	return out, err
}

// ConfPath is the nginx.conf that nginx runs, in the syncer's --nginx-dir.
func ConfPath(dir string) string { return filepath.Join(filepath.Clean(dir), "nginx.conf") }

// ConfChecksum returns the checksum an nginx.conf rendered by Renderer
// names in its header ("# checksum conf-..."), which GetVersion reports
// once the workers run it; "" when it names none.
func ConfChecksum(conf []byte) string {
	for range 5 { // the header is the first lines
		line, rest, _ := bytes.Cut(conf, []byte("\n"))
		if sum, ok := bytes.CutPrefix(line, []byte("# checksum ")); ok {
			return string(bytes.TrimSpace(sum))
		}
		conf = rest
	}
	return ""
}
