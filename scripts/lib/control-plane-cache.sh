# Sourced by the control plane builds: the cache check and the build lock they share.
# Needs CACHE (the release's cache directory), BIN, BUILD_ID and log().

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
