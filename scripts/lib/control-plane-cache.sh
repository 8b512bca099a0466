# Sourced by the control plane builds: the cache check, the build lock and the compiler settings
# they share. Needs CACHE (the release's cache directory), BIN, BUILD_ID and log() by the time
# exit_if_cached runs.

# CPU is most of a fresh machine's test command, and these builds most of that: the same
# programs for less of it. The compiler collects its garbage a quarter as often (GOGC=400:
# 1.20's kube-apiserver took 227 CPU-s, not 253), compiles each package on one thread (-c=1:
# `go build` keeps both cores busy with packages anyway, and threads within one package cost
# more than they gain), writes no debug information (-dwarf=false: `-ldflags -w` drops it from
# the binaries anyway) and inlines only within Go's standard library (-l elsewhere: the
# runtime, maps, JSON and TLS keep their inlining). 1.37's kube-apiserver from empty caches,
# with GOGC=400: 815 CPU-s; adding -dwarf=false, 746; adding -c=1 too, 599 (611 measured beside
# the next); adding -l outside the standard library, 496. The whole suite on that API server
# took the same time and CPU as on the inlined one (11.6 and 11.8 minutes, 21.4 and 21.7
# minutes of CPU, back to back); -l everywhere cost it a fifth more CPU in a part of the suite.
# The flags are part of the build's identity: binaries compiled otherwise are built again.
export GOGC=400
GO_COMPILE_FLAGS=(-gcflags "all=-dwarf=false -c=1 -l" -gcflags "std=-dwarf=false -c=1")

cached() {
  [[ -x "$BIN/kube-apiserver" && -x "$BIN/kube-controller-manager" && -x "$BIN/etcd" ]] &&
    [[ "$(cat "$BIN/build-id" 2>/dev/null)" == "$BUILD_ID" ]]
}

# Exits 0 printing CACHE when the binaries of this BUILD_ID are there; otherwise returns holding
# the build lock (fd 9): one build at a time, the others (each test worker asks) wait for it.
exit_if_cached() {
  if cached; then
    log "cached binaries found in $BIN"
    echo "$CACHE"
    exit 0
  fi
  mkdir -p "$CACHE"
  exec 9>"$CACHE/.build.lock"
  flock 9
  if cached; then
    log "built by another process in $BIN"
    echo "$CACHE"
    exit 0
  fi
}
