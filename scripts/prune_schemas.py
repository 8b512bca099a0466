#!/usr/bin/env python3
"""Keep only the schemas `reconcile --local` reads from the installed kubernetes_validate
package: each release's strict `_definitions.json` (about 25 of its 108 MB). The image runs it
after installing the package; the tests run it on a copy and read the copy.

Usage: prune_schemas.py [SITE_PACKAGES_DIR]   (default: where kubernetes_validate is installed)
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

KEPT_DIR = re.compile(r"^v\d+\.\d+\.0-local-strict$")
KEPT_FILE = "_definitions.json"


def prune(package: Path) -> tuple[int, int]:
    """(bytes before, bytes after) of the package's schema directory."""
    root = package / "kubernetes-json-schema"
    before = _size(root)
    for entry in root.iterdir():
        if not entry.is_dir() or not KEPT_DIR.match(entry.name):
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
            continue
        for item in entry.iterdir():
            if item.name != KEPT_FILE:
                shutil.rmtree(item) if item.is_dir() else item.unlink()
        if not (entry / KEPT_FILE).is_file():
            sys.exit(f"{entry}: no {KEPT_FILE}: the package's layout changed, nothing to keep")
    return before, _size(root)


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    if len(sys.argv) > 1:
        package = Path(sys.argv[1]) / "kubernetes_validate"
    else:
        import kubernetes_validate

        package = Path(kubernetes_validate.__file__).parent
    before, after = prune(package)
    print(f"kubernetes_validate schemas: {before / 2**20:.0f} MiB -> {after / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
