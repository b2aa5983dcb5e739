//go:build tools

// Package apiserver is a build wrapper: it pins k8s.io/kubernetes so that
// `make controlplane` can build kube-apiserver from the Go module proxy.
package apiserver

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
