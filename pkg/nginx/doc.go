// Package nginx runs nginx for ingress-sync and makes it serve
// Configurations.
//
// nginx.conf holds only global settings: the listeners (one public server
// per listener), the controller ConfigMap settings that are nginx
// directives and the Lua hooks. Every host, path, per-route setting,
// backend and certificate is Lua data pushed over the loopback
// configuration endpoint, so no Ingress change reloads nginx and no value
// of the cluster is written into nginx.conf. The package has four parts:
//
//   - Renderer renders nginx.conf from Options and config.Global alone, with
//     an embedded text/template, plus the fixed locations of the backend TLS
//     profiles (config.Configuration.UpstreamTLS, proxyssl.go: no value of
//     the cluster but files the Applier writes, named by hash), and those of
//     the ModSecurity profiles of the routes (modsecurity.go: rules files
//     written from validated values, named by hash); Servers,
//     Backends and Certificates never reach it. Each global value goes through a validator (validate.go); one
//     that fails is an error wrapping ErrInvalidValue and nothing is
//     rendered. The file's checksum ("conf-<hex>", a hash of the template
//     input) is rendered into init_by_lua, so GET /configuration/version
//     tells which file the answering worker loaded.
//   - Applier owns the running state. Apply(ctx, next, ch) acts on ch, the
//     Change from Running() to next that its caller decided (pkg/syncer's loop,
//     with config.Diff): the Applier never diffs Configurations. It pushes ch's
//     deltas in an order that never lets a request see a route before what it
//     uses: new and changed backends, then certificates (and the default
//     certificate name), then the routes of the hosts that changed (see Host
//     and HostOf) with next.Checksum, then the removal of certificates and
//     backends. Only when the nginx.conf rendered for next differs from the
//     installed one (a global setting, a new backend TLS or ModSecurity
//     profile or L4 listener) does it reload, before the pushes: nginx -t on a temporary
//     file, rename over nginx.conf, SIGHUP, and confirmation that a worker
//     serves the new file's checksum and the old workers stopped accepting. On
//     failure the previous file stays or is put back and the error wraps
//     ErrInvalidValue, ErrConfigTest, ErrReloadNotConfirmed or ErrNotRunning;
//     after a failed push or reload the next Apply sends the whole state of
//     next instead of ch, less what the Lua side already holds with the same
//     digest. A host the data plane refuses answers 503 alone. WriteConfig is
//     the bootstrap step before the Runner starts; Restore brings a new master
//     to the running state: it reloads one that runs another nginx.conf, sends
//     only the hosts, backends and certificates that differ from what it holds,
//     and removes whatever else it holds.
//   - Process runs nginx as a child ("daemon off; master_process on") in its
//     own process group, restarts it with backoff when it dies (killing
//     workers a dead master left behind), runs the OnStart hooks after every
//     start once the status server answers, and drains nginx when the
//     context of Start ends: SIGQUIT, then SIGKILL of the group after
//     WorkerShutdownTimeout. A new master starts with empty shared dicts, so
//     register Applier.Restore as a hook.
//   - Attached follows an nginx master another process runs in the same
//     Dir (`syncer nginx`): it finds it through the pid file (a live
//     process titled "nginx: master process" with this Dir's nginx.conf),
//     signals it, runs the OnStart hooks for the first master it finds and
//     every later one, and never starts or stops nginx. Process and
//     Attached are Runners.
//   - Client talks to the Lua endpoints on 127.0.0.1:StatusPort with a
//     timeout on every call: PostRoutes, PostBackends and PostCertificates
//     (deltas with a version; an older version is ErrStaleVersion, a refused
//     item ErrRejected); GetRoutes and GetHost (the route table router.lua
//     holds; an unknown host is ErrNotFound), GetBackends, GetCertificates
//     (names and hosts, never keys) and GetVersion (the nginx.conf checksum
//     as checksum, the Configuration of the last routes push as
//     configuration). The wire format is JSON with lowerCamel names.
//
// TCP and UDP services (config.Configuration.L4) and SSL passthrough
// (Options.EnableSSLPassthrough) are a stream block (stream.go), rendered
// and its modules loaded only when there is one of them: nginx.conf holds
// the listeners (protocol, port, PROXY protocol options), and lua/l4.js
// (njs: Debian packages no stream-lua) picks each connection's endpoint
// from the listener's file under Dir/run/l4, which the Applier rewrites
// atomically and only when it changes (streamfiles.go), before a reload
// that adds a listener; the files of removed listeners go after it. A new
// or removed listener, a stream setting or the passthrough option reloads;
// endpoint changes and passthrough hosts do not. With passthrough, the
// public HTTPS listeners move to a stream server that reads the SNI name
// (ssl_preread): a passthrough host's connection goes to its backend
// unterminated (through a hop on a unix socket that drops the PROXY
// header), every other one to the HTTPS server's internal listener on a
// unix socket, with a PROXY header that gives it the client address.
//
// The Lua side lives in the lua/ directory of the repository and is
// embedded in package github.com/ingress-sync/ingress-sync/lua; Prepare
// installs it under Options.Dir/lua (world-readable: workers run as nobody
// when the master is root) unless Options.LuaDir points elsewhere. Every
// *_by_lua block of nginx.conf is one call of lua/phases.lua, one function
// per phase (TestLuaBlocksCallOnlyPhases).
//
// Measured on the Debian packages (nginx 1.22.1, lua-nginx-module 0.10.23):
// the master waits 100 ms after starting new workers before it retires the
// old ones, so a confirmed reload takes about 150 ms at least. nginx.conf
// has a fixed handful of locations whatever the number of hosts, so
// `nginx -t` no longer grows with them.
package nginx
