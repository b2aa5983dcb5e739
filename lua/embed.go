// Package lua embeds the Lua modules that run inside nginx (phases.lua, the
// entry point every *_by_lua block of nginx.conf calls, the modules it
// calls, and settings.lua, the leaf they share) and the njs module of its
// stream block, so that a binary installs the code of its own version:
// pkg/nginx writes them under Options.Dir/lua. modules_test.go fails on a
// require cycle among the modules.
package lua

import "embed"

// Files holds every module, at the paths Lua's package.path expects
// (balancer/round_robin.lua for require("balancer.round_robin")), and
// l4.js, the njs module of the stream servers (TCP and UDP services, SSL
// passthrough).
//
//go:embed *.lua *.js balancer/*.lua
var Files embed.FS
