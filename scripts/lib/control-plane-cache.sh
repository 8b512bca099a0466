# Sourced by the control plane builds: the cache check, the build lock and the compiler settings
# they share. Needs CACHE (the release's cache directory), BIN, BUILD_ID and log().

# CPU is most of a fresh machine's test command, and these builds most of that: the same
# binaries for less of it. The compiler collects its garbage a quarter as often (GOGC=400:
# 1.20's kube-apiserver took 227 CPU-s, not 253), compiles each package on one thread (-c=1:
# `go build` keeps both cores busy with packages anyway, and threads within one package cost
# more than they gain) and writes no debug information (-dwarf=false: `-ldflags -w` drops it
# from the binaries anyway). 1.37's kube-apiserver from empty caches, with GOGC=400: 815 CPU-s;
# adding -dwarf=false, 746; adding -c=1 too, 599. (Passed as `go build -gcflags "$GCFLAGS"`.)
export GOGC=400
GCFLAGS="all=-dwarf=false -c=1"

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
