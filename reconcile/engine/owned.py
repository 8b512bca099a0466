"""What a hook wants a parent to own, completed and checked: one set of rules for every kind.

Each desired object (a CompositeController's child, a DecoratorController's attachment, a
MapController's output) must be of one of the controller's owned types; a namespaced object
goes to its parent's namespace (another one is refused; under a cluster-scoped parent it must
name one, unless the kind has a default: a map input's namespace); it gets the kind's labels and
annotations (generateSelector's `controller-uid`, the map key, the decorator's mark) and must
then match the parent's selector when the kind has one; the parent becomes its controller (an
ownerReference naming another controller is refused: the parent would fight it); it must fit
the API server's size limits; and it is listed once. What differs between kinds is data
(`Completion`); every problem names the object by its place in the answer and the field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from reconcile.engine.flow import Context
from reconcile.engine.keys import object_key, relative_key
from reconcile.engine.limits import child_size_problem
from reconcile.engine.ownership import owner_reference
from reconcile.objects.meta import Obj, identity, labels_of, metadata, namespace_of, uid_of
from reconcile.objects.selectors import LabelSelector
from reconcile.records import dataclass

# Desired objects: owned type key -> object key -> the completed object.
Desired = dict[str, dict[str, Obj]]


@dataclass(frozen=True)
class Completion:
    """One kind's part in completing its desired objects."""

    answer_field: str  # where the hook's answer lists them: children, attachments, outputs
    rules_field: str  # where the controller declares their types: childResources, ...
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    selector: LabelSelector | None = None  # every object must match it
    # under a cluster-scoped parent, the namespace of an object that names none ("": required)
    default_namespace: str = ""
    # keyed as v1 hook requests key children (`name`, `namespace/name` under a cluster-scoped
    # parent) rather than `namespace/name`
    relative_keys: bool = False


def desired_objects(
    ctx: Context[Any, Any], completion: Completion, items: Sequence[Obj]
) -> tuple[Desired, list[str]]:
    """The hook's objects completed, by owned type key then object key, and every problem."""
    desired: Desired = {t.key: {} for t in ctx.owned}
    problems: list[str] = []
    for i, raw in enumerate(items):
        obj, problem = complete(ctx, completion, raw)
        if obj is None:
            problems.append(f"{_where(completion, i, raw)}: {problem}")
            continue
        key = relative_key(ctx.namespaced, obj) if completion.relative_keys else object_key(obj)
        of_type = desired[f"{raw['kind']}.{raw['apiVersion']}"]
        if key in of_type:
            problems.append(f"{_where(completion, i, raw)}: {identity(obj)} is listed twice")
            continue
        of_type[key] = obj
    return desired, problems


def _where(completion: Completion, index: int, raw: Obj) -> str:
    return f"{completion.answer_field}[{index}] ({raw.get('kind')} {metadata(raw).get('name')})"


def complete(ctx: Context[Any, Any], completion: Completion, raw: Obj) -> tuple[Obj | None, str]:
    """`raw` as the parent owns it, or None and why it cannot be. Copied where it is changed
    (the top level and metadata); the rest is shared with the answer, which nothing changes
    (a create or an update copies what it sends)."""
    key = f"{raw['kind']}.{raw['apiVersion']}"
    owned_type = ctx.owned_type(key)
    if owned_type is None:
        known = ", ".join(t.key for t in ctx.owned) or "none"
        return None, f"{key} is not one of the controller's {completion.rules_field} ({known})"
    meta = dict(raw["metadata"])
    obj = {**raw, "metadata": meta}
    parent_namespace = namespace_of(ctx.parent)
    if owned_type.resource.namespaced:
        namespace = meta.get("namespace") or parent_namespace or completion.default_namespace
        if not namespace:
            return None, "metadata.namespace is required under a cluster-scoped parent"
        if ctx.namespaced and namespace != parent_namespace:
            return None, (
                f"metadata.namespace {namespace!r} is not the parent's namespace "
                f"{parent_namespace!r}"
            )
        meta["namespace"] = namespace
    else:
        meta.pop("namespace", None)
    if completion.labels:
        meta["labels"] = {**labels_of(obj), **completion.labels}
    if completion.annotations:
        meta["annotations"] = {**(meta.get("annotations") or {}), **completion.annotations}
    selector = completion.selector
    if selector is not None and not selector.matches(obj):
        return None, (
            f"metadata.labels {labels_of(obj)} do not match the parent's selector "
            f"({selector.render()})"
        )
    parent_uid = uid_of(ctx.parent)
    refs = [r for r in meta.get("ownerReferences") or [] if r.get("uid") != parent_uid]
    if any(r.get("controller") is True for r in refs):
        return None, "metadata.ownerReferences names another controller"
    meta["ownerReferences"] = [*refs, owner_reference(ctx.parent)]
    too_big = child_size_problem(obj, annotated=not ctx.strategy.server_side)
    if too_big:
        return None, too_big
    return obj, ""
