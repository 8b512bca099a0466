"""Which Kubernetes release the in-process cluster behaves as: the resources it serves, the
schemas it checks built-in kinds against and the defaults it applies (`defaults` asks
`Release.minor`).

Each release serves the GA versions its own OpenAPI schemas define and the beta versions it
served (`served`: 1.20 serves `apiextensions.k8s.io/v1beta1`, `extensions/v1beta1`, ...; a
version a later release removed is not served by it), and decodes every version it serves
against its own schemas (1.20's ship with this package). 1.20 and the newest release (the
default) are held to real API servers of their release.
"""

from __future__ import annotations

import re
from dataclasses import field, replace

from reconcile.cluster.memory.openapi.decoding import ReleaseSchemas, release_schemas
from reconcile.cluster.memory.resources.catalog import STABLE_RESOURCES
from reconcile.cluster.memory.resources.served import (
    ALIASES,
    STORED_AS,
    served_betas,
    storage_version_hash,
)
from reconcile.cluster.types import ResourceInfo
from reconcile.records import dataclass
from reconcile.releases import DEFAULT_VERSION, supported_versions

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?$")
# Services list `deletecollection` in 1.37, not in 1.20 (the release in between that added it
# is not told apart here); CSINodes list a status subresource in 1.37.
_SERVICES_DELETECOLLECTION_SINCE = 25
_CSINODE_STATUS_SINCE = 37
# The version each resource is stored as where a release serves several: the GA one (the newest
# GA where there are two), else the newest beta; an HPA as kube-apiserver stores it (1.20:
# autoscaling/v1, whose annotations keep what v2beta2 says beyond it).
_STORED_FIRST = {"horizontalpodautoscalers.autoscaling": ("v2", "v1")}


class UnsupportedVersion(ValueError):
    pass


@dataclass(frozen=True)
class Release:
    version: str
    minor: int
    schemas: ReleaseSchemas
    resources: tuple[ResourceInfo, ...]
    # group/resource -> the served version objects are stored as
    storage: dict[str, ResourceInfo] = field(default_factory=dict)


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
    schemas = release_schemas(wanted)
    served = [
        _as_served(info, minor)
        for info in (*STABLE_RESOURCES, *served_betas(minor))
        if schemas.defines(info.api_version, info.kind)
    ]
    storage = _storage(served)
    hashed = tuple(_hashed(info, storage[_stored(info)], minor) for info in served)
    stored = {key: _hashed(info, info, minor) for key, info in storage.items()}
    return Release(wanted, minor, schemas, hashed, stored)


def _stored(info: ResourceInfo) -> str:
    """The group/resource `info`'s objects are stored under (ingresses.extensions: the
    networking.k8s.io ones)."""
    return ALIASES.get(info.group_resource, info.group_resource)


def _as_served(info: ResourceInfo, minor: int) -> ResourceInfo:
    if info.group_resource == "services" and minor < _SERVICES_DELETECOLLECTION_SINCE:
        return replace(info, verbs=info.verbs - {"deletecollection"})
    if info.group_resource == "csinodes.storage.k8s.io" and minor >= _CSINODE_STATUS_SINCE:
        return replace(info, has_status=True)
    return info


def _storage(served: list[ResourceInfo]) -> dict[str, ResourceInfo]:
    by_resource: dict[str, list[ResourceInfo]] = {}
    for info in served:
        if info.group_resource not in ALIASES:
            by_resource.setdefault(info.group_resource, []).append(info)
    return {
        group_resource: min(infos, key=lambda i: _storage_rank(group_resource, i.version))
        for group_resource, infos in by_resource.items()
    }


def _storage_rank(group_resource: str, version: str) -> tuple[int, int, int]:
    first = _STORED_FIRST.get(group_resource, ())
    if version in first:
        return (0, first.index(version), 0)
    match = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if match is None:
        return (3, 0, 0)
    major, level, number = int(match.group(1)), match.group(2), int(match.group(3) or 0)
    return (1 if level is None else 2, -major, -number)


def _hashed(info: ResourceInfo, stored: ResourceInfo, minor: int) -> ResourceInfo:
    """`info` with the `storageVersionHash` kube-apiserver gives it."""
    api_version, kind = STORED_AS.get(minor, {}).get(
        _stored(info), (stored.api_version, stored.kind)
    )
    return replace(info, storage_hash=storage_version_hash(api_version, kind))
