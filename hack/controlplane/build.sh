#!/usr/bin/env bash
# Builds kube-apiserver v1.37.2 and etcd v3.7.0 from the Go module proxy into
# the cache folder given as $1 (make passes the shared one,
# $INGRESS_SYNC_CACHE/controlplane/<hash of this folder>; default
# .cache/controlplane), reusing binaries that are already there. Each binary
# is built from its own wrapper module so that the project's go.mod never
# pulls in k8s.io/kubernetes. Clones that build into the same folder at once
# each write a file of their own and rename it into place.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "${1:-$here/../../.cache/controlplane}" && cd "${1:-$here/../../.cache/controlplane}" && pwd)
k8s_version=v1.37.2

if [ ! -x "$out/kube-apiserver" ]; then
  echo "controlplane: building kube-apiserver $k8s_version (cold: about 8 minutes on 2 cores)" >&2
  (cd "$here/apiserver" && go build -trimpath -o "$out/kube-apiserver.tmp.$$" \
    -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37" \
    k8s.io/kubernetes/cmd/kube-apiserver)
  mv "$out/kube-apiserver.tmp.$$" "$out/kube-apiserver"
fi
if [ ! -x "$out/etcd" ]; then
  echo "controlplane: building etcd v3.7.0" >&2
  (cd "$here/etcd" && go build -trimpath -ldflags "-s -w" -o "$out/etcd.tmp.$$" go.etcd.io/etcd/server/v3)
  mv "$out/etcd.tmp.$$" "$out/etcd"
fi
echo "controlplane: $out/kube-apiserver $out/etcd" >&2
