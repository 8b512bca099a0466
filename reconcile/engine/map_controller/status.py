"""A MapController parent's aggregated status: counts of inputs and outputs, and of the
outputs' true conditions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconcile.engine.actions import Action, ActionKind
from reconcile.engine.map_controller.inputs import MAP_KEY_LABEL, MapInput, OutputType, output_id_of
from reconcile.objects.meta import Obj, labels_of
from reconcile.objects.resource import ResourceInfo

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
                if output_id_of(output_type, o) not in deleted
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
