# Sourced by the control plane builds: the cache check, the build lock and the compiler settings
# they share. Needs CACHE (the release's cache directory), BIN, BUILD_ID and log() by the time
# exit_if_cached runs.

# CPU is most of a fresh machine's test command, and these builds a third of that: the same
# programs for less of it. The compiler collects no garbage below a heap of 3 GiB (GOGC=off
# with GOMEMLIMIT: few packages' compiles come near it; the largest process, kcm's link, peaked
# at 2.3 GB), compiles each package on one thread (-c=1: `go build` keeps both cores busy with
# packages anyway, and threads within one package cost more than they gain), writes no debug
# information (-dwarf=false: `-ldflags -w` drops it from the binaries anyway) and inlines only
# within Go's standard library (-l elsewhere: the runtime, maps, JSON and TLS keep their
# inlining). 1.37's kube-apiserver from empty caches, with GOGC=400 alone: 815 CPU-s;
# adding -dwarf=false, 746; adding -c=1 too, 599 (611 measured beside the next); adding -l
# outside the standard library, 496; 485 again, then 447 with GOGC=off and GOMEMLIMIT=3GiB
# (1.37's three programs 635 -> 592 CPU-s, 1.20's two 223 -> 210). The whole suite on the
# API server compiled with -l outside the standard library took the same time and CPU as on
# the inlined one (11.6 and 11.8 minutes, 21.4 and 21.7 minutes of CPU, back to back); -l
# everywhere cost it a fifth more CPU in a part of the suite.
# The flags are part of the build's identity: binaries compiled otherwise are built again.
export GOGC=off GOMEMLIMIT=3GiB
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
