# Shared by the hack/image scripts (sourced, not run).
log() { echo "image: $*" >&2; }
die() { log "$*"; exit 1; }
need_root() { [ "$(id -u)" -eq 0 ] || die "$1 needs root"; }

# The cache shared by every clone of this repository on the machine (the
# README's "Caches"); the Makefile passes it.
INGRESS_SYNC_CACHE=${INGRESS_SYNC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ingress-sync}
IMAGE_CACHE=$INGRESS_SYNC_CACHE/image

# podman on these machines: runc (crun stops with "cgroups in hybrid mode not
# supported"), and rlimits the machine can set (it lacks CAP_SYS_RESOURCE).
PODMAN_FLAGS=(--runtime runc --ulimit nofile=20000:20000 --ulimit nproc=1024:1024)
