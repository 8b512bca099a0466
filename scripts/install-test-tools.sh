#!/usr/bin/env bash
# Tools the tests run besides the control plane: a Prometheus Pushgateway (Debian package).
# Idempotent: exits at once when they are installed.
set -euo pipefail
if command -v prometheus-pushgateway >/dev/null 2>&1; then exit 0; fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# One apt at a time: the control plane's build may be installing its packages meanwhile.
APT_LOCK=/tmp/reconcile-apt.lock
apt_get() { flock "$APT_LOCK" $SUDO apt-get "$@"; }
echo "[test-tools] installing prometheus-pushgateway" >&2
if ! apt_get install -y -qq --no-install-recommends prometheus-pushgateway >/dev/null 2>&1; then
  apt_get update -qq
  apt_get install -y -qq --no-install-recommends prometheus-pushgateway >/dev/null
fi
