#!/usr/bin/env bash
# Builds helm from the Go module proxy (helm.sh/helm/v4) into the folder given
# as $1 (make passes $INGRESS_SYNC_CACHE/helm/<version>; default .cache/bin),
# like hack/controlplane/build.sh does for the control plane. A helm of the same version already there is reused; another
# version is replaced. test/deploy runs this binary for the chart tests
# (deploy/helm/ingress-sync) and fails when it is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "${1:-$here/../../.cache/bin}" && cd "${1:-$here/../../.cache/bin}" && pwd)
helm_version=v4.3.1

if [ -x "$out/helm" ] && [ "$("$out/helm" version --template '{{.Version}}' 2>/dev/null)" = "$helm_version" ]; then
  exit 0
fi
echo "helm: building helm $helm_version (cold: about 2 minutes on 2 cores)" >&2
tmp=$(mktemp -d "$out/.build.XXXXXX") # in $out: the rename below is atomic
trap 'rm -rf "$tmp"' EXIT
GOBIN=$tmp go install -trimpath \
  -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$helm_version" \
  "helm.sh/helm/v4/cmd/helm@$helm_version"
mv "$tmp/helm" "$out/helm"
echo "helm: $out/helm" >&2
