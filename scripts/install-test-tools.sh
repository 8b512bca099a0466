#!/usr/bin/env bash
# Tools the tests run besides the control plane: a Prometheus Pushgateway (Debian package).
# Idempotent: exits at once when they are installed.
set -euo pipefail
if command -v prometheus-pushgateway >/dev/null 2>&1; then exit 0; fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
echo "[test-tools] installing prometheus-pushgateway" >&2
if ! $SUDO apt-get install -y -qq --no-install-recommends prometheus-pushgateway >/dev/null 2>&1; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends prometheus-pushgateway >/dev/null
fi
