#!/usr/bin/env bash
# Installs nginx with the Lua module from the Debian 12 packages, the same
# packages the image is built on. Idempotent and non-interactive: packages that
# are already installed are left alone, the package index is refreshed only
# when a package has no install candidate, services are not started by the
# install (policy-rc.d), and an nginx that was started anyway and listens on
# :80 is stopped, because tests and syncers run their own nginx.
set -euo pipefail

packages=(nginx libnginx-mod-http-lua libnginx-mod-http-ndk lua-resty-core lua-resty-lrucache lua-cjson)
# The stream module and its njs module: TCP and UDP services, SSL passthrough.
packages+=(libnginx-mod-stream libnginx-mod-stream-js)
# Brotli compression (enable-brotli) and GeoIP2 ($geoip2_* with use-geoip2);
# nginx.conf loads each only while its ConfigMap key is on.
packages+=(libnginx-mod-http-brotli-filter libnginx-mod-http-geoip2)
# ModSecurity v3 and the OWASP Core Rule Set (enable-modsecurity); nginx.conf
# loads the module only while a route runs ModSecurity.
packages+=(libnginx-mod-http-modsecurity libmodsecurity3 modsecurity-crs)
# The e2e suite and `make run` also need ip (iproute2) and unshare (util-linux)
# for their private network namespace.
packages+=(iproute2 util-linux)
export DEBIAN_FRONTEND=noninteractive

log() { echo "install-nginx: $*" >&2; }

installed() {
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true)" = "installed" ]
}

has_candidate() {
  local c
  c=$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')
  [ -n "$c" ] && [ "$c" != "(none)" ]
}

missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done

if [ "${#missing[@]}" -gt 0 ] && [ "$(id -u)" -ne 0 ]; then
  log "missing ${missing[*]}; installing them needs root (apt-get install)"
  exit 1
fi

if [ "${#missing[@]}" -gt 0 ]; then
  for p in "${missing[@]}"; do
    if ! has_candidate "$p"; then
      log "no candidate for $p: apt-get update"
      apt-get update -q
      break
    fi
  done
  # Keep maintainer scripts from starting nginx: exit 101 means "not allowed".
  policy=/usr/sbin/policy-rc.d
  own_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 0755 "$policy"
    own_policy=1
  fi
  log "installing ${missing[*]}"
  status=0
  apt-get install -q -y --no-install-recommends \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
    "${missing[@]}" || status=$?
  if [ "$own_policy" -eq 1 ]; then rm -f "$policy"; fi
  if [ "$status" -ne 0 ]; then
    log "apt-get install failed with status $status"
    exit "$status"
  fi
else
  log "all packages already installed"
fi

# listening_on_80 prints the inode of every socket listening on port 80
# (IPv4 and IPv6); state 0A is LISTEN, port 80 is 0050.
listening_on_80() {
  cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
    awk '$2 ~ /:0050$/ && $4 == "0A" {print $10}'
}

stop_system_nginx() {
  if [ -s /run/nginx.pid ]; then
    pid=$(cat /run/nginx.pid)
    if kill -0 "$pid" 2>/dev/null; then
      log "stopping auto-started nginx (pid $pid)"
      kill -QUIT "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
      done
      kill -TERM "$pid" 2>/dev/null || true
    fi
  fi
}

if [ -n "$(listening_on_80)" ]; then
  stop_system_nginx
  sleep 0.2
fi
if [ -n "$(listening_on_80)" ]; then
  log "something still listens on :80; stop it before running nginx tests"
  exit 1
fi

for m in /usr/lib/nginx/modules/ndk_http_module.so /usr/lib/nginx/modules/ngx_http_lua_module.so \
  /usr/lib/nginx/modules/ngx_stream_module.so /usr/lib/nginx/modules/ngx_stream_js_module.so \
  /usr/lib/nginx/modules/ngx_http_brotli_filter_module.so /usr/lib/nginx/modules/ngx_http_geoip2_module.so \
  /usr/lib/nginx/modules/ngx_http_modsecurity_module.so /etc/modsecurity/crs/crs-setup.conf \
  /usr/share/modsecurity-crs/rules/REQUEST-941-APPLICATION-ATTACK-XSS.conf; do
  if [ ! -f "$m" ]; then
    log "module $m is missing after install"
    exit 1
  fi
done
log "$(nginx -v 2>&1); nothing listens on :80"
