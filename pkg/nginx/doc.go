// Package nginx runs nginx for ingress-sync and applies Configurations to it.
//
// It has four parts:
//
//   - Renderer turns a model.Configuration and Options into nginx.conf with an
//     embedded text/template. Every value that reaches the file goes through a
//     typed validator in this package first (host names, paths, sizes, CIDRs,
//     rewrite targets, backend names, the checksum); a value that fails is a
//     render error wrapping ErrInvalidValue and is never spliced into the
//     file. Configuration.Checksum is rendered into init_by_lua, so that
//     GET /configuration/version tells which file the answering worker loaded.
//   - Process runs nginx as a child ("daemon off; master_process on") in its
//     own process group, restarts it with backoff when it dies (killing
//     workers a dead master left behind), runs the OnStart hooks after every
//     start once the status server answers, and drains nginx when the
//     context of Start ends: SIGQUIT, then SIGKILL of the group after
//     WorkerShutdownTimeout. Callers map SIGTERM to cancelling that context.
//     Lua shared dicts are lost when the master restarts, so a hook must push
//     the whole dynamic state again: register Applier.Restore.
//   - Applier applies changes. Reload renders, runs `nginx -t` on a
//     temporary file, pushes new and changed backends and certificates,
//     renames the file over nginx.conf, sends SIGHUP and confirms: a worker
//     serves the new checksum and every worker of the old configuration has
//     stopped accepting. Then it removes the backends and certificates that
//     are gone. On failure the previous nginx.conf stays or is put back (and
//     reloaded) and the error wraps ErrConfigTest or ErrReloadNotConfirmed
//     with nginx's message. Update sends only the dynamic part of a
//     model.Change (changed and removed backends and certificates, the
//     default certificate name) without a reload. WriteConfig is the
//     bootstrap step before Process.Start.
//   - Client talks to the Lua endpoints on 127.0.0.1:StatusPort with a
//     timeout on every call: PostBackends and PostCertificates (deltas with a
//     version), GetBackends (what the balancer holds, for `syncer backends`),
//     GetCertificates and GetVersion. The wire format is JSON with the
//     model's lowerCamel names; items are model.Backend and model.Certificate.
//
// The Lua side lives in the lua/ directory of the repository and is embedded
// in package github.com/ingress-sync/ingress-sync/lua; Prepare installs it
// under Options.Dir/lua (world-readable: workers run as nobody when the
// master is root) unless Options.LuaDir points elsewhere.
//
// Measured limits of the Debian packages (nginx 1.22.1, lua-nginx-module
// 0.10.23): the master waits 100 ms after starting new workers before it
// retires the old ones, so a confirmed reload takes about 150 ms at least;
// and the Lua module builds an OpenSSL context for every location (for
// cosockets), about 0.2 ms of `nginx -t` or reload and roughly 24 KB of memory
// each, which dominates with thousands of servers.
package nginx
