"""Virtual environments for real projects' Python hook servers: the project's own pinned
`requirements.txt`, installed from PyPI with pip as its Dockerfile does, once per machine.

An environment lives in `$RECONCILE_HOOK_ENV_CACHE` (default `~/.cache/reconcile/hook-envs`),
named by the project and a hash of its requirements, so a changed pin makes a new one. It is
built in a temporary directory and renamed into place under a lock, so test workers that need
it at once build it once and none sees it half made."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

INSTALL_TIMEOUT = 600


def cache_root() -> Path:
    configured = os.environ.get("RECONCILE_HOOK_ENV_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "reconcile" / "hook-envs"


def python_hook_env(name: str, requirements: Path) -> Path:
    """The Python interpreter of an environment holding `requirements` (pip's `-r` file): built
    on first use; the test fails, with pip's words, when it cannot be."""
    digest = hashlib.sha256(requirements.read_bytes()).hexdigest()[:12]
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    target = root / f"{name}-{digest}"
    python = target / "bin" / "python"
    if python.exists():
        return python
    with (root / f".{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if python.exists():  # another worker built it while this one waited
            return python
        building = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=root))
        try:
            _build(building, requirements, name)
            # the venv's scripts name its directory: build where it will live
            os.rename(building, target)
        except BaseException:
            shutil.rmtree(building, ignore_errors=True)
            raise
    return python


def _build(directory: Path, requirements: Path, name: str) -> None:
    # renamed into place afterwards: a venv's console scripts name the directory in their
    # shebangs, but `python -m` (how the hooks are started) never runs them
    steps = (
        [sys.executable, "-m", "venv", "--clear", str(directory)],
        [
            str(directory / "bin" / "python"),
            *("-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--quiet"),
            *("-r", str(requirements)),
        ],
    )
    for step in steps:
        try:
            done = subprocess.run(
                step, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"{name}'s hook environment: {' '.join(step)} timed out", pytrace=False)
        if done.returncode != 0:
            pytest.fail(
                f"{name}'s hook environment could not be built ({' '.join(step)}): "
                f"{(done.stderr or done.stdout)[-2000:]}",
                pytrace=False,
            )
