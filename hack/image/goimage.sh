#!/usr/bin/env bash
# Makes the Go build image without a registry: the Debian base of base.sh
# plus this machine's Go toolchain ($(go env GOROOT), copied to
# /usr/local/go) and its CA certificates, laid out as the official golang
# image (GOPATH=/go). Its name carries the Go version
# (localhost/ingress-sync/golang:1.26.8-bookworm), so a new Go makes a new
# image. Prints the name. Needs root (podman, buildah).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/image/common.sh
. "$here/common.sh"
need_root buildah
command -v buildah >/dev/null || die "buildah is missing: make image-deps (as root)"

release=${DEBIAN_RELEASE:-bookworm}
base=${BASE_IMAGE:-localhost/ingress-sync/debian:$release-slim}
goroot=$(go env GOROOT)
version=$(go env GOVERSION)
version=${version#go}
image=${GO_IMAGE:-localhost/ingress-sync/golang:$version-$release}

if podman image exists "$image"; then
  log "Go image $image is in the podman store"
  echo "$image"
  exit 0
fi
podman image exists "$base" || die "no base image $base: hack/image/base.sh makes it"
ctr=$(buildah from --pull=never "$base")
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
# The toolchain without its tests and the module cache of the machine.
buildah copy --quiet "$ctr" "$goroot" /usr/local/go >/dev/null
buildah run --runtime runc --network none "$ctr" -- \
  sh -c 'rm -rf /usr/local/go/test /usr/local/go/api && mkdir -p /go/bin /go/src /etc/ssl/certs'
ca=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
[ -f "$ca" ] && buildah copy --quiet "$ctr" "$ca" /etc/ssl/certs/ca-certificates.crt >/dev/null
buildah config \
  --env GOLANG_VERSION="$version" --env GOPATH=/go --env GOTOOLCHAIN=local \
  --env PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --workingdir /go "$ctr"
buildah commit --quiet --rm "$ctr" "$image" >/dev/null
trap - EXIT
log "Go image $image made from $base and $goroot"
echo "$image"
