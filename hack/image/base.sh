#!/usr/bin/env bash
# Makes the Debian base image without a registry: debootstrap --variant=minbase
# of Debian 12 (bookworm) from deb.debian.org, trimmed like debian:bookworm-slim
# (no apt lists or .debs, no docs, man pages or locales), imported into podman
# as $BASE_IMAGE (default localhost/ingress-sync/debian:bookworm-slim).
#
# The root file system is kept as a tar in the shared cache
# ($INGRESS_SYNC_CACHE/image, see the README), so that another clone, or a
# podman store that was wiped, imports it again in seconds instead of running
# debootstrap (about 35 s and the network). Needs root (debootstrap, podman).
#
#   hack/image/base.sh            # make or import it, print its name
#   hack/image/base.sh --refresh  # run debootstrap again (newer packages)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/image/common.sh
. "$here/common.sh"

release=${DEBIAN_RELEASE:-bookworm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
image=${BASE_IMAGE:-localhost/ingress-sync/debian:$release-slim}
tarball=$IMAGE_CACHE/debian-$release-slim.tar
refresh=0
[ "${1:-}" = "--refresh" ] && refresh=1

if [ "$refresh" -eq 0 ] && podman image exists "$image"; then
  log "base $image is in the podman store"
  echo "$image"
  exit 0
fi

if [ "$refresh" -eq 1 ] || [ ! -s "$tarball" ]; then
  need_root debootstrap
  command -v debootstrap >/dev/null || die "debootstrap is missing: make image-deps (as root)"
  mkdir -p "$IMAGE_CACHE"
  work=$(mktemp -d "$IMAGE_CACHE/debootstrap.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  rootfs=$work/rootfs
  log "debootstrap --variant=minbase $release from $mirror (about 35 s)"
  debootstrap --variant=minbase "$release" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log" >&2; die "debootstrap failed"; }
  # What debian:*-slim leaves out: dpkg keeps these paths out of every
  # later package too (the image's apt-get install).
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/slim" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
CFG
  # apt keeps no .debs and no package lists in the image.
  cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'CFG'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
CFG
  find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/* \
    "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/cache/apt/*.bin \
    "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/* "$rootfs"/var/cache/ldconfig/aux-cache \
    "$rootfs"/root/.bash_history "$rootfs"/tmp/* "$rootfs"/var/tmp/*
  mkdir -p "$rootfs/var/lib/apt/lists/partial"
  # A container's resolv.conf and hostname are the runtime's.
  : >"$rootfs/etc/resolv.conf"
  : >"$rootfs/etc/hostname"
  # The same bytes from the same files: sorted, owner and times fixed to the
  # newest package's build (dpkg's SOURCE_DATE_EPOCH of this release).
  epoch=$(stat -c %Y "$rootfs/var/lib/dpkg/status")
  tar -C "$rootfs" --sort=name --numeric-owner --xattrs --mtime="@$epoch" --clamp-mtime \
    -cf "$work/rootfs.tar" .
  mv "$work/rootfs.tar" "$tarball"
  log "base root file system: $tarball ($(du -h "$tarball" | cut -f1), Debian $(cat "$rootfs/etc/debian_version"))"
fi

need_root podman
podman import --change 'CMD ["/bin/bash"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  "$tarball" "$image" >/dev/null
log "base $image imported from $tarball"
echo "$image"
