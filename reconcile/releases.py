"""The Kubernetes releases `--local` can behave as: 1.20 (the oldest, modelled by hand and held
to a real 1.20 API server) and each release whose schemas kubernetes_validate installs (the
newest held to a real API server of its release). Light on purpose: `--help` names them
without loading the in-process cluster."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path

DEFAULT_VERSION = "1.37"
OLDEST_VERSION = "1.20"
SCHEMA_PACKAGE = "kubernetes_validate"
SCHEMA_DIR = re.compile(r"^v(\d+)\.(\d+)\.0-local-strict$")


@lru_cache(maxsize=1)
def schema_releases() -> tuple[str, ...]:
    """The releases (`1.25`, ...) whose schemas are installed, oldest first."""
    found: list[tuple[int, int]] = []
    for entry in schema_root().iterdir():
        match = SCHEMA_DIR.match(entry.name)
        if match:
            found.append((int(match.group(1)), int(match.group(2))))
    return tuple(f"{major}.{minor}" for major, minor in sorted(found))


def supported_versions() -> tuple[str, ...]:
    return (OLDEST_VERSION, *schema_releases())


def schema_root() -> Path:
    """The schemas' directory, found without importing the package: its `__init__` imports
    jsonschema (80 ms), and every run, `--help` included, names the releases."""
    spec = find_spec(SCHEMA_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"{SCHEMA_PACKAGE} is not installed", name=SCHEMA_PACKAGE)
    return Path(next(iter(spec.submodule_search_locations))) / "kubernetes-json-schema"
