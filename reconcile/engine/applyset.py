"""The inventory of objects applied from `--manifests`, by the ApplySet convention (KEP-3659,
what `kubectl apply --applyset --prune` uses): a parent object names the set and lists the kinds
of its members; each member carries the set's id in a label. Prune deletes only labelled members
that left the manifests, so an object someone else made, even with the same name, is never
touched. Pure: plans actions from observed objects."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from reconcile.engine.actions import Action, ActionKind
from reconcile.engine.writes import CLIENT_SIDE, ApplyStrategy
from reconcile.objects.meta import Obj, identity, is_deleting, labels_of, metadata, name_of
from reconcile.objects.resource import ResourceInfo
from reconcile.records import dataclass

PART_OF = "applyset.kubernetes.io/part-of"
SET_ID = "applyset.kubernetes.io/id"
TOOLING = "applyset.kubernetes.io/tooling"
GROUP_KINDS = "applyset.kubernetes.io/contains-group-kinds"
NAMESPACES = "applyset.kubernetes.io/additional-namespaces"
TOOLING_VALUE = "reconcile/v1"
TOOLING_NAME = "reconcile"
# A prune deleting more than this share of the set's members (and more than one object) reads as
# a wrong or broken input (the wrong directory, a checkout that lost files): refused unless
# confirmed (`--prune-allow-shrink`).
SHRINK_BOUND = 0.5


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


def parent_problem(parent: Obj | None, ref: ApplySetRef) -> str | None:
    """Why an existing object cannot be this set's parent, as kubectl refuses it: an object that
    is not a parent (no `applyset.kubernetes.io/id` label, or another id), or the parent of
    another tool's set. None when the parent is ours or does not exist yet."""
    if parent is None:
        return None
    where = f"{ref}: ConfigMap {ref.namespace}/{ref.name}"
    labels = labels_of(parent)
    annotations = metadata(parent).get("annotations") or {}
    set_id = labels.get(SET_ID)
    if set_id is None:
        return (
            f"{where} exists and is not an ApplySet parent (it has no label {SET_ID}); "
            "choose another --applyset"
        )
    if set_id != ref.id:
        return f"{where}: its label {SET_ID} is {set_id!r}, not this set's {ref.id!r}"
    tooling = str(annotations.get(TOOLING) or "")
    if tooling.partition("/")[0] != TOOLING_NAME:
        found = repr(tooling) if tooling else "missing"
        return (
            f"{where} belongs to another tool (annotation {TOOLING} is {found}, not "
            f"{TOOLING_NAME}/...); its members are not ours to apply or prune"
        )
    return None


def shrink_problem(members: int, deletes: int) -> str | None:
    """A prune that would empty most of the set: refused unless confirmed."""
    if deletes <= 1 or deletes <= members * SHRINK_BOUND:
        return None
    return (
        f"--prune would delete {deletes} of the set's {members} members (more than "
        f"{SHRINK_BOUND:.0%}): nothing was applied or pruned; if that is meant, confirm with "
        "--prune-allow-shrink"
    )


def count_members(members: list[tuple[ResourceInfo, Obj]], ref: ApplySetRef) -> int:
    return sum(1 for _, obj in members if is_member(obj, ref) and not is_deleting(obj))


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


def holds_objects(action: Action) -> bool:
    """A delete that takes other objects with it: a Namespace (everything in it) or a
    CustomResourceDefinition (every object of its kind)."""
    kind, api_version = action.resource.kind, action.resource.api_version
    return (kind == "Namespace" and api_version == "v1") or (
        kind == "CustomResourceDefinition" and action.resource.group == "apiextensions.k8s.io"
    )


def cascade(contents: list[Obj], pruned: set[tuple[str, str, str]]) -> list[Obj]:
    """What deleting a Namespace or CRD holding `contents` would take beyond the prune itself:
    the objects that are not pruned anyway and that the cluster did not make on its own (a
    namespace's `default` ServiceAccount, `kube-root-ca.crt`, token Secrets, Events) and that
    have no owner (a dependent goes with its owner, which is listed)."""
    taken = []
    for obj in contents:
        key = (group_kind(obj), str(metadata(obj).get("namespace") or ""), name_of(obj))
        if key in pruned or _made_by_the_cluster(obj) or metadata(obj).get("ownerReferences"):
            continue
        taken.append(obj)
    return sorted(taken, key=identity)


def _made_by_the_cluster(obj: Obj) -> bool:
    kind, name = obj.get("kind"), name_of(obj)
    return (
        (kind == "ServiceAccount" and name == "default")
        or (kind == "ConfigMap" and name == "kube-root-ca.crt")
        or (kind == "Secret" and obj.get("type") == "kubernetes.io/service-account-token")
        or kind == "Event"
    )


def pruned_keys(actions: list[Action]) -> set[tuple[str, str, str]]:
    return {
        (group_kind(a.target), str(metadata(a.target).get("namespace") or ""), name_of(a.target))
        for a in actions
        if a.kind is ActionKind.DELETE
    }


def describe_taken(taken: list[Obj], shown: int = 5) -> str:
    names = ", ".join(identity(obj) for obj in taken[:shown])
    more = f" and {len(taken) - shown} more" if len(taken) > shown else ""
    return f"{len(taken)} object{'s' if len(taken) != 1 else ''} outside the set ({names}{more})"


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
