#!/usr/bin/env bash
# Builds etcd + kube-apiserver + kube-controller-manager of a current Kubernetes release from the
# Go module proxy (k8s.io/kubernetes with its staging modules pinned to the same release, etcd at
# the version that release's go.mod pins) and caches the binaries outside the checkout.
# Idempotent: exits at once when the cached binaries are already there.
#
#   scripts/build-control-plane-current.sh   # prints the cache directory on its last line
#
# Environment: RECONCILE_CONTROL_PLANE_CACHE (default: ~/.cache/reconcile/control-plane; the
# binaries go to its subdirectory v<release>), RECONCILE_CURRENT_RELEASE (default below).
set -euo pipefail

RELEASE="${RECONCILE_CURRENT_RELEASE:-1.37.2}"
BASE="${RECONCILE_CONTROL_PLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reconcile/control-plane}"
CACHE="$BASE/v$RELEASE"
BIN="$CACHE/bin"
log() { printf '[control-plane %s] %s\n' "$RELEASE" "$*" >&2; }

# What the binaries are built from: binaries of another recipe are built again (change RECIPE
# with anything below that changes the binaries).
RECIPE="k8s.io/kubernetes v$RELEASE, staging modules at its tag, etcd as its go.mod pins;"
RECIPE+=" CGO_ENABLED=0 -trimpath -ldflags '-s -w' with the version stamped"
# shellcheck source=scripts/lib/control-plane-cache.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/control-plane-cache.sh"
BUILD_ID=$(printf '%s' "$RECIPE ${GO_COMPILE_FLAGS[*]}" | sha256sum | cut -d' ' -f1)
exit_if_cached

command -v go >/dev/null || { log "no go on PATH: a current release builds with the machine's Go"; exit 1; }
# The module proxy and checksum database as the machine sets them; never a toolchain download.
export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0
export GOCACHE="$BASE/go-build-cache-current" GOMODCACHE="$BASE/go-mod-cache"

WORK="$CACHE/build"
rm -rf "$WORK"
mkdir -p "$WORK" "$BIN"
rm -f "$BIN/build-id"
cd "$WORK"
minor=${RELEASE#*.}; minor=${minor%%.*}
patch=${RELEASE##*.}
staging="v0.$minor.$patch"

log "reading k8s.io/kubernetes@v$RELEASE's go.mod from the module proxy"
gomod=$(go mod download -json "k8s.io/kubernetes@v$RELEASE" | python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])')
# Every staging module (k8s.io/api => ./staging/src/k8s.io/api) at the release's own tag.
mapfile -t modules < <(sed -n 's#^\s*\(k8s\.io/[a-z0-9-]*\) => \./staging/src/.*#\1#p' "$gomod")
{
  echo "module reconcile.test/controlplane"
  echo
  echo "go $(sed -n 's/^go \([0-9.]*\)$/\1/p' "$gomod")"
  echo
  echo "require k8s.io/kubernetes v$RELEASE"
  echo
  echo "replace ("
  for module in "${modules[@]}"; do echo "	$module => $module $staging"; done
  echo ")"
} >go.mod
cat >tools.go <<'GO'
//go:build tools

package controlplane

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
GO
log "resolving modules (${#modules[@]} staging modules at $staging)"
go mod tidy -e >"$WORK/tidy.log" 2>&1 || { tail -n 40 "$WORK/tidy.log" >&2; exit 1; }

# The version the server reports (/version), as a release build stamps it.
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=v$RELEASE -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
for cmd in kube-apiserver kube-controller-manager; do
  log "go build k8s.io/kubernetes/cmd/$cmd"
  go build -trimpath "${GO_COMPILE_FLAGS[@]}" -ldflags "$ldflags" -o "$BIN/$cmd" \
    "k8s.io/kubernetes/cmd/$cmd"
done
log "go build go.etcd.io/etcd/server/v3 (etcd $(go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3))"
go build -trimpath "${GO_COMPILE_FLAGS[@]}" -ldflags "-s -w" -o "$BIN/etcd" go.etcd.io/etcd/server/v3
echo "$BUILD_ID" >"$BIN/build-id"
log "cleaning the build tree (keeping the binaries and the module cache)"
cd "$CACHE"
rm -rf "$WORK"
"$BIN/kube-apiserver" --version >&2
echo "$CACHE"
