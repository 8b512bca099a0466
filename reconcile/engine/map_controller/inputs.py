"""A MapController's inputs: their map keys, which a parent selects, the outputs grouped by
key, and the hooks' requests and responses."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from reconcile.engine.children import OwnedType
from reconcile.engine.flow import Context
from reconcile.engine.keys import request_key
from reconcile.engine.responses import ParentError, ResponseError, object_list, unknown_fields
from reconcile.objects.meta import (
    Obj,
    annotations_of,
    controller_ref,
    identity,
    labels_of,
    name_of,
    namespace_of,
    split_api_version,
    uid_of,
)
from reconcile.objects.resource import ResourceInfo
from reconcile.objects.selectors import LabelSelector, SelectorError, label_selector_from_spec
from reconcile.records import dataclass
from reconcile.specs.controller import OwnedRule
from reconcile.specs.map_controller import MapController

MAP_KEY_LABEL = "metacontroller.k8s.io/map-key"
# The input an output was made from, readable (`Kind namespace/name`); the label is opaque.
MAP_INPUT_ANNOTATION = "metacontroller.k8s.io/map-input"

# (output type key, namespace, name): one output object.
OutputId = tuple[str, str, str]


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


# One parent and what its sync is planned with.
OutputContext = Context[MapController, OwnedRule]


class SelectorProblem(ParentError):
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


def _keyed(
    ctx: OutputContext, outputs: Mapping[str, list[Obj]], uniform: bool
) -> dict[str, dict[str, Obj]]:
    return {
        t.key: {request_key(ctx.namespaced, o, uniform): o for o in outputs.get(t.key, [])}
        for t in ctx.owned
    }


def map_request(
    ctx: OutputContext, item: MapInput, outputs: Mapping[str, list[Obj]], *, uniform: bool = False
) -> dict[str, Any]:
    """`uniform`: outputs keyed `namespace/name` (hook version v2)."""
    return {
        "controller": ctx.controller.raw,
        "parent": ctx.parent,
        "mapKey": item.key,
        "input": item.obj,
        "outputs": _keyed(ctx, outputs, uniform),
    }


def tombstone_request(
    ctx: OutputContext, key: str, outputs: Mapping[str, list[Obj]], *, uniform: bool = False
) -> dict[str, Any]:
    return {
        "controller": ctx.controller.raw,
        "parent": ctx.parent,
        "mapKey": key,
        "outputs": _keyed(ctx, outputs, uniform),
    }


def parse_outputs(data: Any, hook: str, *, strict: bool = False) -> list[Obj]:
    """`{outputs: [objects]}` from a map or tombstone hook (null or absent: none)."""
    if not isinstance(data, dict):
        raise ResponseError(hook, ["the response must be a JSON object"])
    problems: list[str] = unknown_fields(data, ("outputs",)) if strict else []
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


def output_id_of(output_type: OutputType, obj: Obj) -> OutputId:
    return (output_type.key, namespace_of(obj), name_of(obj))
