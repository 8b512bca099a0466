"""MapController decisions, pure: which inputs a parent selects, their map keys, the hooks'
requests and responses, the actions for each map key, and the parent's aggregated status.

Every output carries its input's map key as a label and is controlled by the parent. Each map
key is planned on its own: a key whose hook failed or whose answer is unusable changes nothing,
and the other keys go on.
"""

from __future__ import annotations

import copy
import functools
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from reconcile.api.controller import OwnedRule
from reconcile.api.map_controller import MapController
from reconcile.engine.actions import Action, ActionKind
from reconcile.engine.children import (
    Blocked,
    ChildrenDiff,
    OwnedType,
    diff_children,
    problem,
    wait,
)
from reconcile.engine.keys import object_key, relative_key
from reconcile.engine.limits import child_size_problem, status_size_problem
from reconcile.engine.ownership import owner_reference
from reconcile.engine.responses import ResponseError, object_list
from reconcile.engine.writes import CLIENT_SIDE, ApplyStrategy
from reconcile.objects.jsondata import json_equal
from reconcile.objects.meta import (
    Obj,
    annotations_of,
    controller_ref,
    identity,
    is_deleting,
    labels_of,
    metadata,
    name_of,
    namespace_of,
    split_api_version,
    uid_of,
)
from reconcile.objects.resource import ResourceInfo
from reconcile.objects.selectors import LabelSelector, SelectorError, label_selector_from_spec

MAP_KEY_LABEL = "metacontroller.k8s.io/map-key"
# The input an output was made from, readable (`Kind namespace/name`); the label is opaque.
MAP_INPUT_ANNOTATION = "metacontroller.k8s.io/map-input"

# (output type key, namespace, name): one output object.
OutputId = tuple[str, str, str]
# Finds an existing object by (output type key, namespace, name) in the pass's snapshot.
Lookup = Callable[[str, str, str], Obj | None]


def map_key(obj: Obj) -> str:
    """The input's opaque key: a digest of its API group, kind, namespace, name and uid (a new
    object of the same name is another input). 40 hex digits: a valid label value."""
    group = split_api_version(str(obj.get("apiVersion") or ""))[0]
    parts = (group, str(obj.get("kind") or ""), namespace_of(obj), name_of(obj), uid_of(obj))
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:40]


# An output rule resolved through discovery.
OutputType = OwnedType[OwnedRule]


@dataclass(frozen=True)
class MapInput:
    resource: ResourceInfo
    obj: Obj
    key: str

    @property
    def name(self) -> str:
        return identity(self.obj)


@dataclass(frozen=True)
class MapContext:
    controller: MapController
    parent: Obj
    parent_resource: ResourceInfo
    output_types: tuple[OutputType, ...]
    strategy: ApplyStrategy = CLIENT_SIDE

    @property
    def namespaced(self) -> bool:
        return self.parent_resource.namespaced

    def output_type(self, api_version: str, kind: str) -> OutputType | None:
        return next(
            (
                t
                for t in self.output_types
                if t.resource.api_version == api_version and t.resource.kind == kind
            ),
            None,
        )


class SelectorProblem(ValueError):
    """The parent's `spec.selector` cannot be read: nothing is done for the parent."""


def input_selector(parent: Obj) -> LabelSelector:
    """The parent's duck-typed `spec.selector`; missing or empty selects every input."""
    spec = parent.get("spec")
    raw = spec.get("selector") if isinstance(spec, dict) else None
    try:
        return label_selector_from_spec(raw, "spec.selector")
    except SelectorError as exc:
        raise SelectorProblem(str(exc)) from exc


def select_inputs(
    parent: Obj, selector: LabelSelector, candidates: list[tuple[ResourceInfo, list[Obj]]]
) -> list[MapInput]:
    """The inputs of a parent: candidates (already limited to its namespace) that match the
    selector, except the parent's own objects (an output is never its own parent's input)."""
    parent_uid = uid_of(parent)
    selected = []
    for resource, objects in candidates:
        for obj in objects:
            ref = controller_ref(obj)
            if ref is not None and ref.get("uid") == parent_uid:
                continue
            if selector.matches(obj):
                selected.append(MapInput(resource, obj, map_key(obj)))
    return selected


def outputs_by_key(
    types: tuple[OutputType, ...], controlled: Mapping[str, list[Obj]]
) -> dict[str, dict[str, list[Obj]]]:
    """The parent's outputs (objects it controls that carry a map key), by key then type."""
    grouped: dict[str, dict[str, list[Obj]]] = {}
    for output_type in types:
        for obj in controlled.get(output_type.key, []):
            key = labels_of(obj).get(MAP_KEY_LABEL)
            if key:
                grouped.setdefault(key, {}).setdefault(output_type.key, []).append(obj)
    return grouped


def _keyed(ctx: MapContext, outputs: Mapping[str, list[Obj]]) -> dict[str, dict[str, Obj]]:
    return {
        t.key: {relative_key(ctx.namespaced, o): o for o in outputs.get(t.key, [])}
        for t in ctx.output_types
    }


def map_request(
    ctx: MapContext, item: MapInput, outputs: Mapping[str, list[Obj]]
) -> dict[str, Any]:
    return {
        "controller": ctx.controller.raw,
        "parent": ctx.parent,
        "mapKey": item.key,
        "input": item.obj,
        "outputs": _keyed(ctx, outputs),
    }


def tombstone_request(
    ctx: MapContext, key: str, outputs: Mapping[str, list[Obj]]
) -> dict[str, Any]:
    return {
        "controller": ctx.controller.raw,
        "parent": ctx.parent,
        "mapKey": key,
        "outputs": _keyed(ctx, outputs),
    }


def parse_outputs(data: Any, hook: str) -> list[Obj]:
    """`{outputs: [objects]}` from a map or tombstone hook (null or absent: none)."""
    if not isinstance(data, dict):
        raise ResponseError(hook, ["the response must be a JSON object"])
    problems: list[str] = []
    outputs = object_list(data.get("outputs"), "outputs", problems)
    if problems:
        raise ResponseError(hook, problems)
    return outputs


_UNNAMED = "an input that is gone"


def input_named(output: Obj) -> str:
    """The input an output was made from, as its annotation names it."""
    return annotations_of(output).get(MAP_INPUT_ANNOTATION) or _UNNAMED


def detached_input(outputs: Mapping[str, list[Obj]]) -> str:
    """The input a detached group was made from, as its outputs' annotation names it."""
    names = (input_named(obj) for group in outputs.values() for obj in group)
    return next((name for name in names if name != _UNNAMED), _UNNAMED)


# -- planning ------------------------------------------------------------------------------


@dataclass(frozen=True)
class LiveKey:
    """A selected input and the outputs its map hook returned."""

    input: MapInput
    desired: list[Obj]


@dataclass(frozen=True)
class DetachedKey:
    """Outputs whose input is gone; `keep` (from the tombstone hook) are left as they are."""

    key: str
    input: str  # readable, from the outputs' annotation
    keep: list[Obj] = field(default_factory=list)


@dataclass
class KeyPlan:
    """The actions for one map key, or the problems that stop it (then it has no actions)."""

    key: str
    input: str
    actions: list[Action] = field(default_factory=list)
    waits: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@dataclass
class _Desired:
    output_type: OutputType
    obj: Obj


def _as_output(ctx: MapContext, item: MapInput, output_type: OutputType, raw: Obj) -> Obj:
    obj = copy.deepcopy(raw)
    meta = obj["metadata"]
    if output_type.resource.namespaced:
        # under a cluster-scoped parent an output goes to its input's namespace by default
        meta["namespace"] = (
            meta.get("namespace") or namespace_of(ctx.parent) or namespace_of(item.obj)
        )
    else:
        meta.pop("namespace", None)
    meta["labels"] = {**(meta.get("labels") or {}), MAP_KEY_LABEL: item.key}
    meta["annotations"] = {**(meta.get("annotations") or {}), MAP_INPUT_ANNOTATION: item.name}
    refs = [r for r in meta.get("ownerReferences") or [] if r.get("uid") != uid_of(ctx.parent)]
    meta["ownerReferences"] = [*refs, owner_reference(ctx.parent)]
    return obj


def desired_outputs(ctx: MapContext, live: LiveKey, plan: KeyPlan) -> dict[OutputId, _Desired]:
    """The hook's outputs completed (map key label, input annotation, controllerRef); what is
    wrong goes to `plan.problems`."""
    desired: dict[OutputId, _Desired] = {}
    for i, raw in enumerate(live.desired):
        where = f"outputs[{i}] ({raw.get('kind')} {metadata(raw).get('name')})"
        output_type = ctx.output_type(str(raw["apiVersion"]), str(raw["kind"]))
        if output_type is None:
            known = ", ".join(t.key for t in ctx.output_types)
            plan.problems.append(
                f"{where}: {raw['kind']}.{raw['apiVersion']} is not one of the controller's "
                f"outputResources ({known})"
            )
            continue
        namespace = metadata(raw).get("namespace")
        if (
            output_type.resource.namespaced
            and ctx.namespaced
            and namespace
            not in (
                None,
                "",
                namespace_of(ctx.parent),
            )
        ):
            plan.problems.append(
                f"{where}: metadata.namespace {namespace!r} is not the parent's namespace "
                f"{namespace_of(ctx.parent)!r}"
            )
            continue
        if any(
            r.get("controller") is True and r.get("uid") != uid_of(ctx.parent)
            for r in metadata(raw).get("ownerReferences") or []
        ):
            plan.problems.append(f"{where}: metadata.ownerReferences names another controller")
            continue
        obj = _as_output(ctx, live.input, output_type, raw)
        too_big = child_size_problem(obj, annotated=not ctx.strategy.server_side)
        if too_big:
            plan.problems.append(f"{where}: {too_big}")
            continue
        output_id = (output_type.key, namespace_of(obj), name_of(obj))
        if output_id in desired:
            plan.problems.append(f"{where}: {identity(obj)} is listed twice")
            continue
        desired[output_id] = _Desired(output_type, obj)
    return desired


def _output_id(output_type: OutputType, obj: Obj) -> OutputId:
    return (output_type.key, namespace_of(obj), name_of(obj))


def _kept_ids(
    ctx: MapContext, detached: DetachedKey, observed: Mapping[str, list[Obj]], plan: KeyPlan
) -> set[OutputId]:
    """The tombstone hook's answer as output ids; each must be one of the group's outputs."""
    ours = {_output_id(t, obj): obj for t in ctx.output_types for obj in observed.get(t.key, [])}
    kept: set[OutputId] = set()
    for i, raw in enumerate(detached.keep):
        output_type = ctx.output_type(str(raw["apiVersion"]), str(raw["kind"]))
        namespace = metadata(raw).get("namespace")
        matches = [
            output_id
            for output_id in ours
            if output_type is not None
            and output_id[0] == output_type.key
            and output_id[2] == name_of(raw)
            and (not namespace or output_id[1] == namespace)
        ]
        if not matches:
            plan.problems.append(
                f"outputs[{i}]: {raw.get('kind')} {name_of(raw)} is not one of the outputs of "
                f"{detached.input}"
            )
        kept.update(matches)
    return kept


def plan_parent_outputs(
    ctx: MapContext,
    live: list[LiveKey],
    detached: list[DetachedKey],
    observed: Mapping[str, Mapping[str, list[Obj]]],
    lookup: Lookup,
) -> list[KeyPlan]:
    """A plan per map key, for the keys whose hooks answered (`observed`: every output of the
    parent by key then type, including keys whose hooks failed: those are left as they are).

    Order within a key: deletes, creates, updates. A name two keys want is a problem for both;
    a name another key still holds is a problem, or a wait while that key deletes it."""
    plans: dict[str, KeyPlan] = {}
    wanted: dict[str, dict[OutputId, _Desired]] = {}
    for live_key in live:
        plan = plans[live_key.input.key] = KeyPlan(live_key.input.key, live_key.input.name)
        wanted[live_key.input.key] = desired_outputs(ctx, live_key, plan)
    claimants: dict[OutputId, list[str]] = {}
    for key, desired in wanted.items():
        for output_id in desired:
            claimants.setdefault(output_id, []).append(key)
    for output_id, keys in claimants.items():
        if len(keys) < 2:
            continue
        names = " and ".join(plans[k].input for k in keys)
        kind = output_id[0].split(".", 1)[0]
        where = f"{output_id[1]}/{output_id[2]}" if output_id[1] else output_id[2]
        for key in keys:
            plans[key].problems.append(f"{kind} {where} is an output of both {names}")

    holders: dict[OutputId, tuple[str, str]] = {}  # every existing output -> key, input
    for key, by_type in observed.items():
        for output_type in ctx.output_types:
            for obj in by_type.get(output_type.key, []):
                holders[_output_id(output_type, obj)] = (key, input_named(obj))
    deleted: set[OutputId] = set()  # what the keys that act delete
    for item in detached:
        plan = plans[item.key] = KeyPlan(item.key, item.input)
        kept = _kept_ids(ctx, item, observed.get(item.key, {}), plan)
        if not plan.problems:
            _delete_detached(ctx, plan, kept, observed.get(item.key, {}), deleted)
    for key, desired in wanted.items():
        if not plans[key].problems:
            deleted |= _stale_ids(ctx, desired, observed.get(key, {}))
    for key, desired in wanted.items():
        plan = plans[key]
        if not plan.problems:
            occupant = _occupant(plan, holders, deleted, plans, lookup)
            _diff_outputs(ctx, plan, desired, observed.get(key, {}), occupant)
    return list(plans.values())


def _delete_detached(
    ctx: MapContext,
    plan: KeyPlan,
    kept: set[OutputId],
    observed: Mapping[str, list[Obj]],
    deleted: set[OutputId],
) -> None:
    tombstone = ctx.controller.hooks.tombstone is not None
    reason = "its input is gone" + (", not kept by the tombstone hook" if tombstone else "")
    for output_type in ctx.output_types:
        for obj in observed.get(output_type.key, []):
            if _output_id(output_type, obj) in kept or is_deleting(obj):
                continue
            deleted.add(_output_id(output_type, obj))
            plan.actions.append(
                Action(ActionKind.DELETE, output_type.resource, obj, None, reason, group=plan.input)
            )


def _stale_ids(
    ctx: MapContext, desired: Mapping[OutputId, _Desired], observed: Mapping[str, list[Obj]]
) -> set[OutputId]:
    """The key's outputs its map hook no longer returns (deleted when the key acts)."""
    return {
        _output_id(output_type, obj)
        for output_type in ctx.output_types
        for obj in observed.get(output_type.key, [])
        if _output_id(output_type, obj) not in desired and not is_deleting(obj)
    }


def _occupant(
    plan: KeyPlan,
    holders: Mapping[OutputId, tuple[str, str]],
    deleted: set[OutputId],
    plans: Mapping[str, KeyPlan],
    lookup: Lookup,
) -> Callable[[OutputType, Obj], Blocked | None]:
    """What stands in the way of creating an output: another key's output of that name (a wait
    while that key deletes it), or any other object (outputs are never adopted)."""

    def occupant(output_type: OutputType, obj: Obj) -> Blocked | None:
        output_id = _output_id(output_type, obj)
        holder = holders.get(output_id)
        if holder is not None:
            other = plans[holder[0]].input if holder[0] in plans else holder[1]
            if output_id in deleted:
                return wait(
                    f"{identity(obj)} (an output of {other}) is deleted before it is created "
                    f"for {plan.input}"
                )
            return problem(f"{identity(obj)} is an output of both {plan.input} and {other}")
        found = lookup(*output_id)
        if found is None:
            return None
        if is_deleting(found):
            return wait(f"{identity(found)} is being deleted before it is created")
        return problem(
            f"{identity(found)} exists and is not an output of this parent; outputs are never "
            "adopted"
        )

    return occupant


def _diff_outputs(
    ctx: MapContext,
    plan: KeyPlan,
    desired: Mapping[OutputId, _Desired],
    observed: Mapping[str, list[Obj]],
    occupant: Callable[[OutputType, Obj], Blocked | None],
) -> None:
    """The key's deletes, creates and updates; none when anything stands in the way."""
    outputs = ChildrenDiff()
    for output_type in ctx.output_types:
        diff_children(
            output_type,
            {object_key(obj): obj for obj in observed.get(output_type.key, [])},
            {
                object_key(item.obj): item.obj
                for item in desired.values()
                if item.output_type.key == output_type.key
            },
            outputs,
            strategy=ctx.strategy,
            stale_reason="not in the map hook's outputs",
            occupant=functools.partial(occupant, output_type),
            group=plan.input,
        )
    if outputs.problems:
        plan.problems += outputs.problems
        plan.actions = []
        plan.waits = []
        return
    plan.actions += outputs.actions
    plan.waits += outputs.waits


# -- status --------------------------------------------------------------------------------


def _condition_name(condition_type: str) -> str:
    return condition_type[:1].lower() + condition_type[1:]


def _true_conditions(obj: Obj) -> set[str]:
    status = obj.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    if not isinstance(conditions, list):
        return set()
    return {
        str(c["type"])
        for c in conditions
        if isinstance(c, dict) and c.get("type") and str(c.get("status")) == "True"
    }


def outputs_after(
    types: tuple[OutputType, ...],
    observed: Mapping[str, Mapping[str, list[Obj]]],
    done: list[Action],
) -> dict[str, dict[str, list[Obj]]]:
    """The outputs as `done` (creates and deletes that succeeded, or would in a dry run) leave
    them: the status then says what the pass made, without waiting for another pass."""
    deleted = {(a.resource.key, a.namespace, a.name) for a in done if a.kind is ActionKind.DELETE}
    after: dict[str, dict[str, list[Obj]]] = {}
    for key, by_type in observed.items():
        for output_type in types:
            kept = [
                o
                for o in by_type.get(output_type.key, [])
                if _output_id(output_type, o) not in deleted
            ]
            if kept:
                after.setdefault(key, {})[output_type.key] = kept
    for action in done:
        if action.kind is ActionKind.CREATE and action.after is not None:
            key = labels_of(action.after).get(MAP_KEY_LABEL, "")
            after.setdefault(key, {}).setdefault(action.resource.key, []).append(action.after)
    return after


def aggregated_status(
    input_resources: list[ResourceInfo],
    inputs: list[MapInput],
    types: tuple[OutputType, ...],
    observed: Mapping[str, Mapping[str, list[Obj]]],
) -> dict[str, Any]:
    """`{<plural>: {total}}` per input resource and `{<plural>: {total, <condition>: n}}` per
    output resource (a condition counted under its type with a lower-case first letter, when
    some output has it True). A resource that is both an input and an output keeps the output
    figures, with the inputs' count as `inputs`."""
    status: dict[str, Any] = {}
    for resource in input_resources:
        count = sum(1 for i in inputs if i.resource == resource)
        status[resource.resource] = {"total": count}
    for output_type in types:
        objects = [o for by_type in observed.values() for o in by_type.get(output_type.key, [])]
        entry: dict[str, Any] = {"total": len(objects)}
        counts: dict[str, int] = {}
        for obj in objects:
            for condition in _true_conditions(obj):
                name = _condition_name(condition)
                counts[name] = counts.get(name, 0) + 1
        for name in sorted(counts):
            if name not in ("total", "inputs"):
                entry[name] = counts[name]
        plural = output_type.resource.resource
        if plural in status and output_type.resource in input_resources:
            entry["inputs"] = status[plural]["total"]
        status[plural] = entry
    return status


def status_action(ctx: MapContext, aggregated: dict[str, Any]) -> Action | None:
    """The parent's status update (`observedGeneration` and the figures), None when the same."""
    wanted = {**aggregated, "observedGeneration": metadata(ctx.parent).get("generation", 0)}
    if json_equal(wanted, ctx.parent.get("status")):
        return None
    after = copy.deepcopy(ctx.parent)
    after["status"] = wanted
    too_big = status_size_problem(after)
    if too_big:
        raise ResponseError("map", [too_big])
    return Action(ActionKind.STATUS, ctx.parent_resource, ctx.parent, after, "aggregated status")


__all__ = [
    "MAP_INPUT_ANNOTATION",
    "MAP_KEY_LABEL",
    "DetachedKey",
    "KeyPlan",
    "LiveKey",
    "Lookup",
    "MapContext",
    "MapInput",
    "OutputType",
    "SelectorProblem",
    "aggregated_status",
    "detached_input",
    "input_selector",
    "map_key",
    "map_request",
    "outputs_after",
    "outputs_by_key",
    "parse_outputs",
    "plan_parent_outputs",
    "select_inputs",
    "status_action",
    "tombstone_request",
]
