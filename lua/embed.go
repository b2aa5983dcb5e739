// Package lua embeds the Lua modules that run inside nginx (configuration,
// balancer, certificate and their helpers), so that a binary installs the Lua
// code of its own version: pkg/nginx writes them under Options.Dir/lua.
package lua

import "embed"

// Files holds every module, at the paths Lua's package.path expects
// (balancer/round_robin.lua for require("balancer.round_robin")).
//
//go:embed *.lua balancer/*.lua
var Files embed.FS
