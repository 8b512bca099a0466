"""Accessors for raw Kubernetes objects, which stay plain JSON-like dicts throughout."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


# Metadata only the API server sets: never applied, never owned by a field manager.
SERVER_OWNED_METADATA: frozenset[str] = frozenset(
    {
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "managedFields",
        "selfLink",
    }
)
# Of those, what marks an object being deleted: kept when an object is written out to a file.
DELETION_METADATA: frozenset[str] = frozenset({"deletionTimestamp", "deletionGracePeriodSeconds"})
# Of those, what changes on every write and says nothing about intent (hidden in diffs).
WRITE_BOOKKEEPING: tuple[str, ...] = (
    "resourceVersion",
    "managedFields",
    "generation",
    "uid",
    "creationTimestamp",
)


def metadata(obj: Obj) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def name_of(obj: Obj) -> str:
    return str(metadata(obj).get("name") or "")


def namespace_of(obj: Obj) -> str:
    return str(metadata(obj).get("namespace") or "")


def uid_of(obj: Obj) -> str:
    return str(metadata(obj).get("uid") or "")


def labels_of(obj: Obj) -> dict[str, str]:
    labels = metadata(obj).get("labels")
    return dict(labels) if isinstance(labels, dict) else {}


def annotations_of(obj: Obj) -> dict[str, str]:
    annotations = metadata(obj).get("annotations")
    return dict(annotations) if isinstance(annotations, dict) else {}


def owner_references(obj: Obj) -> list[dict[str, Any]]:
    refs = metadata(obj).get("ownerReferences")
    return [r for r in refs if isinstance(r, dict)] if isinstance(refs, list) else []


def controller_ref(obj: Obj) -> dict[str, Any] | None:
    # owner_references' reading, without building its list: asked of every candidate child
    refs = metadata(obj).get("ownerReferences")
    if isinstance(refs, list):
        for ref in refs:
            if isinstance(ref, dict) and ref.get("controller") is True:
                return ref
    return None


def is_deleting(obj: Obj) -> bool:
    return bool(metadata(obj).get("deletionTimestamp"))


def identity(obj: Obj) -> str:
    """`Kind namespace/name` for messages."""
    kind = str(obj.get("kind") or "object")
    ns = namespace_of(obj)
    return f"{kind} {ns}/{name_of(obj)}" if ns else f"{kind} {name_of(obj)}"


def split_api_version(api_version: str) -> tuple[str, str]:
    """`apps/v1` -> (`apps`, `v1`); `v1` -> (``, `v1`)."""
    if "/" in api_version:
        group, version = api_version.split("/", 1)
        return group, version
    return "", api_version
