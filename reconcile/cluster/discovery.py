"""Parsing discovery documents (APIResourceList) into `ResourceInfo`, and looking names up."""

from __future__ import annotations

from typing import Any

from reconcile.cluster.types import ResourceInfo
from reconcile.objects.meta import split_api_version


def parse_resource_list(api_version: str, document: dict[str, Any]) -> list[ResourceInfo]:
    group, version = split_api_version(api_version)
    entries = [r for r in document.get("resources") or [] if isinstance(r, dict)]
    with_status = {
        str(r["name"]).split("/", 1)[0]
        for r in entries
        if str(r.get("name", "")).endswith("/status")
    }
    out = []
    for entry in entries:
        name = str(entry.get("name", ""))
        if not name or "/" in name:
            continue
        out.append(
            ResourceInfo(
                group=group,
                version=version,
                resource=name,
                kind=str(entry.get("kind", "")),
                namespaced=bool(entry.get("namespaced")),
                has_status=name in with_status,
                verbs=frozenset(str(v) for v in entry.get("verbs") or []),
                short_names=tuple(str(s) for s in entry.get("shortNames") or []),
                singular=str(entry.get("singularName") or ""),
                storage_hash=str(entry.get("storageVersionHash") or ""),
            )
        )
    return out


def find_resource(resources: list[ResourceInfo], name: str) -> ResourceInfo | None:
    """Match a plural, singular, short name or Kind (Kind exactly, the others lower-case)."""
    for info in resources:
        if info.kind == name:
            return info
    lowered = name.lower()
    for info in resources:
        if lowered in (info.resource, info.singular, info.kind.lower(), *info.short_names):
            return info
    return None
