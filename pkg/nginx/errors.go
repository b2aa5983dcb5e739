package nginx

import "errors"

// Sentinel errors, matched with errors.Is.
var (
	// ErrInvalidOptions is returned when Options do not validate.
	ErrInvalidOptions = errors.New("invalid nginx options")
	// ErrInvalidValue is returned by the renderer when a global setting
	// fails its validator; such a value never reaches nginx.conf.
	ErrInvalidValue = errors.New("invalid value for nginx.conf")
	// ErrConfigTest is returned when `nginx -t` rejects a rendered file; the
	// error text carries nginx's message.
	ErrConfigTest = errors.New("nginx configuration test failed")
	// ErrReloadNotConfirmed is returned when, after SIGHUP, no worker served
	// the new configuration checksum within Options.ReloadTimeout.
	ErrReloadNotConfirmed = errors.New("nginx reload not confirmed")
	// ErrNotRunning is returned when nginx must be signalled, or be up, but
	// is not running.
	ErrNotRunning = errors.New("nginx is not running")
	// ErrLuaEndpoint is returned when a Lua configuration endpoint answers
	// with an error status.
	ErrLuaEndpoint = errors.New("lua configuration endpoint error")
	// ErrStaleVersion is returned when the Lua side holds a newer version than
	// the one posted.
	ErrStaleVersion = errors.New("stale dynamic configuration version")
	// ErrRejected is returned (with ErrLuaEndpoint) when a Lua endpoint
	// refuses a push as invalid (status 400).
	ErrRejected = errors.New("refused by the data plane")
	// ErrNotFound is returned when a Lua endpoint has no such item (a host
	// or a backend).
	ErrNotFound = errors.New("not found")
	// ErrStreamFiles is returned when an endpoint file of the stream
	// servers (TCP and UDP services, SSL passthrough) cannot be written.
	ErrStreamFiles = errors.New("stream endpoint files not written")
)
