"""The cache key of the action's installed package (a virtual environment).

A venv only works with the interpreter it was made from, at the path it was made at, so the key
names the runner's OS and architecture and the interpreter (version and path), then what is
installed: `reconcile-batch==VERSION` from the package index is the same everywhere, a path is
keyed on its content (every file but hidden ones, caches and build output), so a changed
checkout of the package is never served an old install.

Usage: python install_key.py SPEC (run with the interpreter the venv will be made from)."""

from __future__ import annotations

import hashlib
import os
import platform
import sys
from pathlib import Path

_VERSION = "v1"  # bump to drop every cached install
# Not part of what is installed: VCS data, caches, and what setuptools writes into the source
# while it builds (an install would otherwise change the key of the next run).
_SKIPPED = {"__pycache__", "node_modules", "build", "dist"}


def tree_digest(root: Path) -> str:
    """The content of every file under `root` (relative names included), in a stable order."""
    digest = hashlib.sha256()
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".") and d not in _SKIPPED and not d.endswith(".egg-info")
        )
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = Path(directory, name)
            relative = path.relative_to(root).as_posix()
            digest.update(relative.encode() + b"\0")
            if path.is_symlink():
                digest.update(b"link\0" + os.readlink(path).encode() + b"\0")
            elif path.is_file():
                digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def install_key(spec: str) -> str:
    identity = hashlib.sha256()
    for part in (_VERSION, os.path.realpath(sys.executable), sys.version):
        identity.update(part.encode() + b"\0")
    source = Path(spec)
    if source.is_dir():
        identity.update(b"path\0" + tree_digest(source).encode())
    else:
        identity.update(b"spec\0" + spec.encode())
    runner = f"{os.environ.get('RUNNER_OS', 'unknown')}-{os.environ.get('RUNNER_ARCH', 'unknown')}"
    return f"reconcile-venv-{runner}-py{platform.python_version()}-{identity.hexdigest()[:24]}"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: install_key.py SPEC", file=sys.stderr)
        return 2
    print(install_key(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
