"""The actions for each map key of one parent: deletes, creates and updates through the shared
children diff, with what one key's outputs mean for another's."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from reconcile.engine.actions import Action, ActionKind
from reconcile.engine.children import (
    Blocked,
    ChildrenDiff,
    Dropped,
    diff_children,
    problem,
    wait,
)
from reconcile.engine.keys import object_key
from reconcile.engine.limits import child_size_problem
from reconcile.engine.map_controller.inputs import (
    MAP_INPUT_ANNOTATION,
    MAP_KEY_LABEL,
    Lookup,
    MapContext,
    MapInput,
    OutputId,
    OutputType,
    input_named,
    output_id_of,
)
from reconcile.engine.ownership import owner_reference
from reconcile.objects.meta import (
    Obj,
    identity,
    is_deleting,
    metadata,
    name_of,
    namespace_of,
    uid_of,
)

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
    dropped: list[Dropped] = field(default_factory=list)  # fields the server would not keep


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


def _kept_ids(
    ctx: MapContext, detached: DetachedKey, observed: Mapping[str, list[Obj]], plan: KeyPlan
) -> set[OutputId]:
    """The tombstone hook's answer as output ids; each must be one of the group's outputs."""
    ours = {output_id_of(t, obj): obj for t in ctx.output_types for obj in observed.get(t.key, [])}
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
                holders[output_id_of(output_type, obj)] = (key, input_named(obj))
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
            if output_id_of(output_type, obj) in kept or is_deleting(obj):
                continue
            deleted.add(output_id_of(output_type, obj))
            plan.actions.append(
                Action(ActionKind.DELETE, output_type.resource, obj, None, reason, group=plan.input)
            )


def _stale_ids(
    ctx: MapContext, desired: Mapping[OutputId, _Desired], observed: Mapping[str, list[Obj]]
) -> set[OutputId]:
    """The key's outputs its map hook no longer returns (deleted when the key acts)."""
    return {
        output_id_of(output_type, obj)
        for output_type in ctx.output_types
        for obj in observed.get(output_type.key, [])
        if output_id_of(output_type, obj) not in desired and not is_deleting(obj)
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
        output_id = output_id_of(output_type, obj)
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
    plan.dropped += outputs.dropped
