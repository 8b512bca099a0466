#!/usr/bin/env bash
# Builds etcd + kube-apiserver + kube-controller-manager for the integration tests from Debian's
# packages (see DESIGN.md section 4) and caches the binaries outside the checkout.
# Idempotent: exits at once when the cached binaries are already there.
#
#   scripts/build-control-plane.sh            # prints the cache directory on its last line
#
# Environment: RECONCILE_CONTROL_PLANE_CACHE (default: ~/.cache/reconcile/control-plane).
set -euo pipefail

CACHE="${RECONCILE_CONTROL_PLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reconcile/control-plane}"
BIN="$CACHE/bin"
PATCHES="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/control-plane-patches"
log() { printf '[control-plane] %s\n' "$*" >&2; }

# What the binaries are built from besides Debian's source: binaries built from other patches
# (or none) are built again.
RECIPE="Debian's kubernetes source, its OpenAPI definitions generated, -tags providerless,"
RECIPE+=" -s -w, /version and --version stamped from its upstream version;"
# shellcheck source=scripts/lib/control-plane-cache.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/control-plane-cache.sh"
BUILD_ID=$( { echo "$RECIPE ${GO_COMPILE_FLAGS[*]}"; cat "$PATCHES"/*.patch; } | sha256sum |
  cut -d' ' -f1)
exit_if_cached

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# One apt at a time: the test command installs its other tools while this builds.
APT_LOCK=/tmp/reconcile-apt.lock
apt_get() { flock "$APT_LOCK" $SUDO apt-get "$@"; }

# deb-src entries beside the deb ones, so `apt-get source` can find the kubernetes package.
if ! grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  log "adding deb-src entries"
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    $SUDO sed -i 's/^Types: deb$/Types: deb deb-src/' /etc/apt/sources.list.d/debian.sources
  else
    grep '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' | $SUDO tee /etc/apt/sources.list.d/reconcile-src.list >/dev/null
  fi
fi
log "apt-get update"
apt_get update -qq
log "installing golang-1.19-go etcd-server rsync golang-github-modern-go-reflect2-dev dpkg-dev make patch"
apt_get install -y -qq --no-install-recommends \
  golang-1.19-go etcd-server rsync golang-github-modern-go-reflect2-dev dpkg-dev make patch >/dev/null
# Kubernetes 1.20 builds with Go 1.19 only: a machine's newer Go (often first on PATH) refuses
# the linkname uses in its vendored code. Chosen explicitly, whatever else PATH holds.
GO119=/usr/lib/go-1.19/bin
[[ -x "$GO119/go" ]] || { log "Go 1.19 is missing at $GO119"; exit 1; }
export PATH="$GO119:$PATH" GOTOOLCHAIN=local

WORK="$CACHE/build"
rm -rf "$WORK"
mkdir -p "$WORK/src" "$BIN"
rm -f "$BIN/build-id"
cd "$WORK/src"
log "downloading the kubernetes source package"
apt-get source --download-only kubernetes >/dev/null
ORIG=$(ls kubernetes_*.orig.tar.* | head -n 1)
log "unpacking $ORIG"
export GOPATH="$WORK/gopath"
TREE="$GOPATH/src/k8s.io/kubernetes"
mkdir -p "$TREE"
tar -xf "$ORIG" -C "$TREE" --strip-components=1

# reflect2 1.0.1 + Go 1.19 crashes the API server (reflect.mapiterinit) on the first CRD request.
log "replacing vendored modern-go/reflect2 with Debian's 1.0.2"
rm -rf "$TREE/vendor/github.com/modern-go/reflect2"
cp -r /usr/share/gocode/src/github.com/modern-go/reflect2 "$TREE/vendor/github.com/modern-go/reflect2"

# Our patches (control-plane-patches/): the API server builds its OpenAPI documents when asked
# for them, not on every CRD change (most of its CPU time in this suite, which creates hundreds
# of CRDs); later Kubernetes releases do the same.
for patch_file in "$PATCHES"/*.patch; do
  log "applying $(basename "$patch_file")"
  patch -p1 -s -d "$TREE" <"$patch_file"
done

cd "$TREE"
export GO111MODULE=off GOFLAGS="" GOCACHE="$CACHE/go-build-cache"
# The release tree carries every generated file but the API server's OpenAPI definitions: those
# alone are generated (`make generated_files` would rebuild six generators and scan the whole
# tree again, three times the CPU for the same files).
log "make gen_openapi"
make gen_openapi >"$WORK/generated.log" 2>&1 || { tail -n 40 "$WORK/generated.log" >&2; exit 1; }
# The version the server reports (/version), as a release build stamps it: clients read the
# release from it (`kubernetes_1.20.5+really1.20.2.orig.tar.xz` is 1.20.2).
upstream=$(basename "$ORIG" | sed 's/^kubernetes_//; s/\.orig\..*$//; s/^.*really//')
# (1.20 serves /version from client-go's copy of the version package, --version from
# component-base's: both are stamped, as its own build does)
minor=${upstream#*.}
ldflags=""
for pkg in k8s.io/kubernetes/vendor/k8s.io/{component-base,client-go/pkg}/version; do
  ldflags+=" -X $pkg.gitVersion=v$upstream -X $pkg.gitMajor=${upstream%%.*}"
  ldflags+=" -X $pkg.gitMinor=${minor%%.*} -X $pkg.gitTreeState=clean"
done
# providerless: without the in-tree cloud providers (their SDKs are half the source these two
# commands compile); the tests' control plane runs on no cloud.
for cmd in kube-apiserver kube-controller-manager; do
  log "go build -tags providerless ./cmd/$cmd (v$upstream)"
  go build -tags providerless "${GO_COMPILE_FLAGS[@]}" -ldflags "-s -w $ldflags" -o "$BIN/$cmd" \
    "./cmd/$cmd"
done
ln -sf "$(command -v etcd || echo /usr/bin/etcd)" "$BIN/etcd"
echo "$BUILD_ID" >"$BIN/build-id"
log "cleaning the build tree (keeping the binaries)"
rm -rf "$WORK"
"$BIN/kube-apiserver" --version >&2
echo "$CACHE"
