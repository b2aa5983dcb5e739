package testenv

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// Options configure a control plane. The zero value is usable.
type Options struct {
	// BinDir holds kube-apiserver and etcd; default BinDir().
	BinDir string
	// Dir receives data, certificates, keys and logs. Default: a temporary
	// folder removed by Stop. A given Dir is kept.
	Dir string
	// AdvertiseAddress is passed as --advertise-address, for a test world in
	// its own network namespace (e.g. 198.18.0.254). It must not be a loopback
	// address: the apiserver refuses those. Empty leaves the flag out.
	AdvertiseAddress string
	// StartTimeout bounds the wait for etcd and /readyz; default 60s.
	StartTimeout time.Duration
	// APIServerFlags are appended to the kube-apiserver command line.
	APIServerFlags []string
}

// Option changes Options; used by Start.
type Option func(*Options)

// WithAdvertiseAddress sets Options.AdvertiseAddress.
func WithAdvertiseAddress(addr string) Option {
	return func(o *Options) { o.AdvertiseAddress = addr }
}

// WithBinDir sets Options.BinDir.
func WithBinDir(dir string) Option { return func(o *Options) { o.BinDir = dir } }

// WithStartTimeout sets Options.StartTimeout.
func WithStartTimeout(d time.Duration) Option { return func(o *Options) { o.StartTimeout = d } }

// WithAPIServerFlags appends kube-apiserver flags.
func WithAPIServerFlags(flags ...string) Option {
	return func(o *Options) { o.APIServerFlags = append(o.APIServerFlags, flags...) }
}

// ErrInvalidOptions wraps every validation error of Options.
var ErrInvalidOptions = errors.New("invalid control plane options")

// validate checks the options and fills in defaults.
func (o *Options) validate() error {
	if o.AdvertiseAddress != "" {
		ip := net.ParseIP(o.AdvertiseAddress)
		if ip == nil || ip.IsLoopback() || ip.IsUnspecified() {
			return fmt.Errorf("%w: advertise address %q must be a non-loopback IP", ErrInvalidOptions, o.AdvertiseAddress)
		}
	}
	if o.StartTimeout < 0 {
		return fmt.Errorf("%w: negative start timeout %s", ErrInvalidOptions, o.StartTimeout)
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 60 * time.Second
	}
	if o.BinDir == "" {
		dir, err := BinDir()
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidOptions, err)
		}
		o.BinDir = dir
	}
	return nil
}
