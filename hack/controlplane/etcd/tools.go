//go:build tools

// Package etcd is a build wrapper: it pins etcd so that `make controlplane`
// can build the etcd server from the Go module proxy.
package etcd

import (
	_ "go.etcd.io/etcd/server/v3"
)
