"""The actions for each map key of one parent: deletes, creates and updates through the shared
children diff, with what one key's outputs mean for another's."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import field

from reconcile.engine import owned
from reconcile.engine.actions import Action, ActionKind
from reconcile.engine.children import Blocked, ChildrenDiff, diff_children, problem, wait
from reconcile.engine.flow import Lookup, Plan
from reconcile.engine.keys import object_key
from reconcile.engine.map_controller.inputs import (
    MAP_INPUT_ANNOTATION,
    MAP_KEY_LABEL,
    MapInput,
    OutputContext,
    OutputId,
    OutputType,
    input_named,
    output_id_of,
)
from reconcile.objects.meta import Obj, identity, is_deleting, metadata, name_of, namespace_of
from reconcile.records import dataclass

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


def completion(ctx: OutputContext, item: MapInput) -> owned.Completion:
    """An output carries its input's map key (a label) and name (an annotation); under a
    cluster-scoped parent it goes to its input's namespace unless it names one."""
    return owned.Completion(
        "outputs",
        "outputResources",
        labels={MAP_KEY_LABEL: item.key},
        annotations={MAP_INPUT_ANNOTATION: item.name},
        default_namespace=namespace_of(item.obj),
    )


# A key's desired outputs: output type key -> `namespace/name` -> the completed object.
Desired = owned.Desired


def desired_outputs(ctx: OutputContext, live: LiveKey, plan: Plan) -> Desired:
    """The hook's outputs completed (`engine/owned.py`); what is wrong goes to
    `plan.problems`."""
    desired, problems = owned.desired_objects(ctx, completion(ctx, live.input), live.desired)
    plan.problems += problems
    return desired


def _ids(desired: Desired) -> list[OutputId]:
    return [
        (key, namespace_of(obj), name_of(obj))
        for key, objects in desired.items()
        for obj in objects.values()
    ]


def _kept_ids(
    ctx: OutputContext, detached: DetachedKey, observed: Mapping[str, list[Obj]], plan: Plan
) -> set[OutputId]:
    """The tombstone hook's answer as output ids; each must be one of the group's outputs."""
    ours = {output_id_of(t, obj): obj for t in ctx.owned for obj in observed.get(t.key, [])}
    kept: set[OutputId] = set()
    for i, raw in enumerate(detached.keep):
        output_type = ctx.owned_type(f"{raw['kind']}.{raw['apiVersion']}")
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
    ctx: OutputContext,
    live: list[LiveKey],
    detached: list[DetachedKey],
    observed: Mapping[str, Mapping[str, list[Obj]]],
    lookup: Lookup,
) -> list[Plan]:
    """A plan per map key, for the keys whose hooks answered (`observed`: every output of the
    parent by key then type, including keys whose hooks failed: those are left as they are).

    Order within a key: deletes, creates, updates. A name two keys want is a problem for both;
    a name another key still holds is a problem, or a wait while that key deletes it."""
    plans: dict[str, Plan] = {}
    wanted: dict[str, Desired] = {}
    for live_key in live:
        key, name = live_key.input.key, live_key.input.name
        plan = plans[key] = Plan(key=key, group=name)
        wanted[key] = desired_outputs(ctx, live_key, plan)
    claimants: dict[OutputId, list[str]] = {}
    for key, desired in wanted.items():
        for output_id in _ids(desired):
            claimants.setdefault(output_id, []).append(key)
    for output_id, keys in claimants.items():
        if len(keys) < 2:
            continue
        names = " and ".join(plans[k].group for k in keys)
        kind = output_id[0].split(".", 1)[0]
        where = f"{output_id[1]}/{output_id[2]}" if output_id[1] else output_id[2]
        for key in keys:
            plans[key].problems.append(f"{kind} {where} is an output of both {names}")

    holders: dict[OutputId, tuple[str, str]] = {}  # every existing output -> key, input
    for key, by_type in observed.items():
        for output_type in ctx.owned:
            for obj in by_type.get(output_type.key, []):
                holders[output_id_of(output_type, obj)] = (key, input_named(obj))
    deleted: set[OutputId] = set()  # what the keys that act delete
    for item in detached:
        plan = plans[item.key] = Plan(key=item.key, group=item.input)
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
    ctx: OutputContext,
    plan: Plan,
    kept: set[OutputId],
    observed: Mapping[str, list[Obj]],
    deleted: set[OutputId],
) -> None:
    tombstone = ctx.controller.hooks.tombstone is not None
    reason = "its input is gone" + (", not kept by the tombstone hook" if tombstone else "")
    for output_type in ctx.owned:
        for obj in observed.get(output_type.key, []):
            if output_id_of(output_type, obj) in kept or is_deleting(obj):
                continue
            deleted.add(output_id_of(output_type, obj))
            plan.actions.append(
                Action(ActionKind.DELETE, output_type.resource, obj, None, reason, group=plan.group)
            )


def _stale_ids(
    ctx: OutputContext, desired: Desired, observed: Mapping[str, list[Obj]]
) -> set[OutputId]:
    """The key's outputs its map hook no longer returns (deleted when the key acts)."""
    wanted = set(_ids(desired))
    return {
        output_id_of(output_type, obj)
        for output_type in ctx.owned
        for obj in observed.get(output_type.key, [])
        if output_id_of(output_type, obj) not in wanted and not is_deleting(obj)
    }


def _occupant(
    plan: Plan,
    holders: Mapping[OutputId, tuple[str, str]],
    deleted: set[OutputId],
    plans: Mapping[str, Plan],
    lookup: Lookup,
) -> Callable[[OutputType, Obj], Blocked | None]:
    """What stands in the way of creating an output: another key's output of that name (a wait
    while that key deletes it), or any other object (outputs are never adopted)."""

    def occupant(output_type: OutputType, obj: Obj) -> Blocked | None:
        output_id = output_id_of(output_type, obj)
        holder = holders.get(output_id)
        if holder is not None:
            other = plans[holder[0]].group if holder[0] in plans else holder[1]
            if output_id in deleted:
                return wait(
                    f"{identity(obj)} (an output of {other}) is deleted before it is created "
                    f"for {plan.group}"
                )
            return problem(f"{identity(obj)} is an output of both {plan.group} and {other}")
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
    ctx: OutputContext,
    plan: Plan,
    desired: Desired,
    observed: Mapping[str, list[Obj]],
    occupant: Callable[[OutputType, Obj], Blocked | None],
) -> None:
    """The key's deletes, creates and updates; none when anything stands in the way."""
    outputs = ChildrenDiff()
    for output_type in ctx.owned:
        diff_children(
            output_type,
            {object_key(obj): obj for obj in observed.get(output_type.key, [])},
            desired.get(output_type.key, {}),
            outputs,
            strategy=ctx.strategy,
            stale_reason="not in the map hook's outputs",
            occupant=functools.partial(occupant, output_type),
            group=plan.group,
        )
    if outputs.problems:
        plan.problems += outputs.problems
        plan.actions = []
        plan.waits = []
        return
    plan.actions += outputs.actions
    plan.waits += outputs.waits
    plan.dropped += outputs.dropped
