#!/usr/bin/env bash
# Builds the image from deploy/Dockerfile (make image), with a Docker daemon
# when one answers, otherwise with podman (buildah) and no registry:
#
#   - docker: docker build, the base images from the registry (golang and
#     debian:bookworm-slim), BuildKit's cache mounts.
#   - podman: the base images are made here (base.sh: Debian with
#     debootstrap, cached in $INGRESS_SYNC_CACHE/image; goimage.sh: that base
#     plus this machine's Go), the Go modules come from this machine's module
#     cache (mounted read-only as GOPROXY, the network only for a module it
#     lacks), and --timestamp makes the layers reproducible.
#
# Environment: IMAGE (the tag, default ingress-sync:dev, which podman stores
# as localhost/ingress-sync:dev), IMAGE_ENGINE (docker or podman; default:
# docker if `docker info` answers), BASE_IMAGE and GO_IMAGE (other base
# images), SOURCE_DATE_EPOCH (default: the time of the commit checked out).
# Arguments are passed to the build (e.g. --no-cache).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=hack/image/common.sh
. "$here/common.sh"
cd "$root"

image=${IMAGE:-ingress-sync:dev}
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
engine=${IMAGE_ENGINE:-}
if [ -z "$engine" ]; then
  if command -v docker >/dev/null && timeout 10 docker info >/dev/null 2>&1; then
    engine=docker
  elif command -v podman >/dev/null; then
    engine=podman
  else
    die "no Docker daemon answers and podman is missing: make image-deps (as root) installs podman and buildah"
  fi
fi

args=(--build-arg "SOURCE_DATE_EPOCH=$epoch" -f deploy/Dockerfile -t "$image")
began=$(date +%s)
case "$engine" in
docker)
  [ -n "${BASE_IMAGE:-}" ] && args+=(--build-arg "BASE_IMAGE=$BASE_IMAGE")
  [ -n "${GO_IMAGE:-}" ] && args+=(--build-arg "GO_IMAGE=$GO_IMAGE")
  log "docker build -t $image (SOURCE_DATE_EPOCH=$epoch)"
  DOCKER_BUILDKIT=1 docker build "${args[@]}" "$@" .
  # test/image runs the image with podman, under podman's name for a local
  # image (localhost/ingress-sync:dev).
  if command -v podman >/dev/null && [ "$(id -u)" -eq 0 ]; then
    loaded=$(docker save "$image" | podman load | sed -n 's/^Loaded image[^:]*: *//p' | head -1)
    if [ -n "$loaded" ] && [ "${image#*/}" = "$image" ]; then
      podman tag "$loaded" "localhost/$image"
    fi
    log "$image loaded into podman's store ($loaded)"
  fi
  ;;
podman)
  need_root podman
  base=${BASE_IMAGE:-$("$here/base.sh")}
  goimg=${GO_IMAGE:-$(BASE_IMAGE=$base "$here/goimage.sh")}
  args+=(--build-arg "BASE_IMAGE=$base" --build-arg "GO_IMAGE=$goimg")
  # The module cache as a read-only GOPROXY (file://), the public proxy
  # only for what it lacks.
  modcache=$(go env GOMODCACHE)/cache/download
  if [ -d "$modcache" ]; then
    args+=(--volume "$modcache:/goproxy:ro" --build-arg "GOPROXY=file:///goproxy,https://proxy.golang.org")
  fi
  log "podman build -t $image from $base and $goimg (SOURCE_DATE_EPOCH=$epoch)"
  podman build "${PODMAN_FLAGS[@]}" --network host --pull=never --layers \
    --timestamp "$epoch" --identity-label=false --omit-history --ignorefile deploy/Dockerfile.dockerignore \
    "${args[@]}" "$@" .
  ;;
*) die "IMAGE_ENGINE=$engine: docker or podman" ;;
esac
log "$image built with $engine in $(($(date +%s) - began)) s"
