// Package nginx runs nginx for ingress-sync and applies Configurations to it.
//
// It has four parts:
//
//   - Renderer turns a model.Configuration and Options into nginx.conf with an
//     embedded text/template. Every value that reaches the file goes through a
//     typed validator in this package first (host names, paths, sizes, CIDRs,
//     rewrite targets, backend names); a value that fails is a render error
//     wrapping ErrInvalidValue and is never spliced into the file.
//   - Process runs nginx as a child ("daemon off; master_process on"),
//     restarts it with backoff when it dies, calls the OnStart hooks after
//     every (re)start once the status server answers (Lua shared dicts are lost
//     when the master restarts, so the dynamic state must be pushed again),
//     and drains it gracefully (SIGQUIT, then SIGKILL after
//     WorkerShutdownTimeout) when its context ends.
//   - Applier applies changes: Reload renders, tests with `nginx -t`, swaps
//     the file atomically, sends SIGHUP and confirms that new workers serve the
//     new Configuration.Checksum (read from the Lua endpoint), restoring the
//     old file on any failure; Update sends only the changed and removed
//     backends and certificates to Lua, without a reload. Restore pushes the
//     whole dynamic state again and is meant as a Process OnStart hook.
//   - Client talks to the Lua configuration endpoints on 127.0.0.1:StatusPort.
//
// The Lua side (the lua/ directory of the repository, embedded in package
// github.com/ingress-sync/ingress-sync/lua) is installed under Options.Dir
// unless Options.LuaDir points elsewhere.
package nginx
