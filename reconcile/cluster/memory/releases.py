"""Which Kubernetes release the in-process cluster behaves as: the resources it serves, the
schemas it checks built-in kinds against and the defaults it applies (`defaults` asks
`Release.minor`).

1.20 is the oldest release modelled, held by the contract suite to a real 1.20 API server; its
built-in kinds are checked against the oldest schemas installed (1.25). Every release from 1.25
on comes with its own schemas; the newest (the default) is held to a real API server too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reconcile.cluster.memory.builtin import RESOURCES_1_20, STABLE_RESOURCES
from reconcile.cluster.memory.openapi import ReleaseSchemas, release_schemas
from reconcile.cluster.types import ResourceInfo
from reconcile.releases import (
    DEFAULT_VERSION,
    OLDEST_VERSION,
    schema_releases,
    supported_versions,
)

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?$")


class UnsupportedVersion(ValueError):
    pass


@dataclass(frozen=True)
class Release:
    version: str
    minor: int
    schemas: ReleaseSchemas
    resources: tuple[ResourceInfo, ...]


def release(version: str | None = None) -> Release:
    """The release `version` names (`1.31`, `v1.31`, `1.31.2`; default: `DEFAULT_VERSION`)."""
    text = (version or DEFAULT_VERSION).strip()
    match = _VERSION.match(text)
    wanted = f"{match.group(1)}.{match.group(2)}" if match else text
    if wanted not in supported_versions():
        raise UnsupportedVersion(
            f"Kubernetes version {text!r} is not supported by --local; supported: "
            + ", ".join(supported_versions())
        )
    minor = int(wanted.split(".")[1])
    if wanted == OLDEST_VERSION:
        return Release(wanted, minor, release_schemas(schema_releases()[0]), RESOURCES_1_20)
    schemas = release_schemas(wanted)
    served: dict[str, ResourceInfo] = {}
    for info in STABLE_RESOURCES:
        if schemas.defines(info.api_version, info.kind):
            # one stable version per resource: the newest the release defines
            current = served.get(info.group_resource)
            if current is None or _newer(info.version, current.version):
                served[info.group_resource] = info
    return Release(wanted, minor, schemas, tuple(served.values()))


def _newer(a: str, b: str) -> bool:
    return int(a.lstrip("v") or 0) > int(b.lstrip("v") or 0)
