#!/usr/bin/env bash
# Installs what make image needs without a Docker daemon, from Debian's
# packages (as root, only what is missing): podman and buildah, runc (crun
# does not run on these machines), debootstrap for the base image, uidmap,
# catatonit (the pause process of the pods test/image runs).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/image/common.sh
. "$here/common.sh"
export DEBIAN_FRONTEND=noninteractive
packages=(podman buildah runc debootstrap uidmap catatonit)
missing=()
for p in "${packages[@]}"; do
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)" = installed ] || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
need_root "installing ${missing[*]} (apt-get install)"
candidate=$(apt-cache policy "${missing[0]}" 2>/dev/null | awk '/Candidate:/ {print $2}')
if [ -z "$candidate" ] || [ "$candidate" = "(none)" ]; then
  apt-get update -q
fi
log "installing ${missing[*]}"
apt-get install -q -y --no-install-recommends "${missing[@]}"
