"""The inventory of objects applied from `--manifests`, by the ApplySet convention (KEP-3659,
what `kubectl apply --applyset --prune` uses): a parent object names the set and lists the kinds
of its members; each member carries the set's id in a label. Prune deletes only labelled members
that left the manifests, so an object someone else made, even with the same name, is never
touched. Pure: plans actions from observed objects."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from typing import Any

from reconcile.engine.actions import Action, ActionKind
from reconcile.engine.writes import CLIENT_SIDE, ApplyStrategy
from reconcile.objects.meta import Obj, identity, is_deleting, labels_of, metadata, name_of
from reconcile.objects.resource import ResourceInfo

PART_OF = "applyset.kubernetes.io/part-of"
SET_ID = "applyset.kubernetes.io/id"
TOOLING = "applyset.kubernetes.io/tooling"
GROUP_KINDS = "applyset.kubernetes.io/contains-group-kinds"
NAMESPACES = "applyset.kubernetes.io/additional-namespaces"
TOOLING_VALUE = "reconcile/v1"


@dataclass(frozen=True)
class ApplySetRef:
    """The parent: a ConfigMap `name` in `namespace`."""

    namespace: str
    name: str

    @property
    def id(self) -> str:
        """`applyset-<base64url(sha256(name.namespace.kind.group))>-v1`, as the KEP defines."""
        digest = hashlib.sha256(f"{self.name}.{self.namespace}.ConfigMap.".encode()).digest()
        encoded = base64.urlsafe_b64encode(digest).decode().rstrip("=")
        return f"applyset-{encoded}-v1"

    def __str__(self) -> str:
        return f"ApplySet {self.namespace}/{self.name}"


def group_kind(obj: Obj) -> str:
    """`Deployment.apps`, `ConfigMap` (the core group is empty)."""
    api_version = str(obj.get("apiVersion") or "")
    group = api_version.rpartition("/")[0]
    kind = str(obj.get("kind") or "")
    return f"{kind}.{group}" if group else kind


def recorded_group_kinds(parent: Obj | None) -> set[str]:
    if parent is None:
        return set()
    text = (metadata(parent).get("annotations") or {}).get(GROUP_KINDS) or ""
    return {part for part in str(text).split(",") if part}


def recorded_namespaces(parent: Obj | None) -> set[str]:
    if parent is None:
        return set()
    text = (metadata(parent).get("annotations") or {}).get(NAMESPACES) or ""
    return {part for part in str(text).split(",") if part}


def parent_object(ref: ApplySetRef, group_kinds: set[str], namespaces: set[str]) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": ref.name,
            "namespace": ref.namespace,
            "labels": {SET_ID: ref.id},
            "annotations": {
                TOOLING: TOOLING_VALUE,
                GROUP_KINDS: ",".join(sorted(group_kinds)),
                NAMESPACES: ",".join(sorted(namespaces - {ref.namespace})),
            },
        },
    }


def as_member(desired: Obj, ref: ApplySetRef) -> Obj:
    """The manifest labelled as a member of the set."""
    member: dict[str, Any] = {**desired, "metadata": dict(metadata(desired))}
    member["metadata"]["labels"] = {**labels_of(desired), PART_OF: ref.id}
    return member


def plan_apply(
    resource: ResourceInfo,
    desired: Obj,
    observed: Obj | None,
    strategy: ApplyStrategy = CLIENT_SIDE,
) -> list[Action]:
    """Create what is missing; update what differs (as children are applied)."""
    if observed is None:
        return [strategy.create(resource, desired, "in the manifests, missing")]
    update = strategy.update(resource, observed, desired, "differs from the manifests")
    return update.actions if update.changed else update.upkeep


def is_member(obj: Obj, ref: ApplySetRef) -> bool:
    return labels_of(obj).get(PART_OF) == ref.id


def plan_prune(
    members: list[tuple[ResourceInfo, Obj]], wanted: set[tuple[str, str, str]], ref: ApplySetRef
) -> list[Action]:
    """Deletes for the set's members (by label) that the manifests no longer have: namespaced
    objects first, then cluster-scoped ones, CustomResourceDefinitions and Namespaces last."""
    deletes = []
    for resource, obj in members:
        if not is_member(obj, ref) or is_deleting(obj):
            continue
        key = (group_kind(obj), str(metadata(obj).get("namespace") or ""), name_of(obj))
        if key in wanted:
            continue
        deletes.append(
            Action(ActionKind.DELETE, resource, obj, None, f"left the manifests ({ref})")
        )
    return sorted(deletes, key=_prune_order)


def member_key(obj: Obj, namespaced: bool) -> tuple[str, str, str]:
    namespace = str(metadata(obj).get("namespace") or "") if namespaced else ""
    return (group_kind(obj), namespace, name_of(obj))


def _prune_order(action: Action) -> tuple[int, str]:
    kind = action.resource.kind
    rank = 0 if action.resource.namespaced else 1
    if kind == "CustomResourceDefinition":
        rank = 2
    elif kind == "Namespace":
        rank = 3
    return rank, identity(action.target)
