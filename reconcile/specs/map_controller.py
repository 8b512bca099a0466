"""MapController (metacontroller.k8s.io/v1alpha1): the typed spec and its parser.

For every input object the parent selects, a map hook returns the outputs the parent should
own for it; a tombstone hook decides which outputs to keep once their input is gone.
"""

from __future__ import annotations

from typing import Any

from reconcile.records import dataclass
from reconcile.specs.controller import OwnedRule, controller_spec, no_repeats, owned_rule
from reconcile.specs.fields import Fields
from reconcile.specs.hooks import HookSpec
from reconcile.specs.hooks_parse import optional_hook
from reconcile.specs.webhook_security import parse_endpoint_configs

KIND = "MapController"
# Outputs: objects of a resource the map hook returns and the parent owns.
OutputRule = OwnedRule


@dataclass(frozen=True)
class ResourceRef:
    api_version: str
    resource: str


@dataclass(frozen=True)
class MapHooks:
    map: HookSpec
    tombstone: HookSpec | None = None


@dataclass(frozen=True)
class MapController:
    name: str
    parent: ResourceRef
    inputs: tuple[ResourceRef, ...]
    outputs: tuple[OutputRule, ...]
    hooks: MapHooks
    raw: dict[str, Any]  # the whole object, sent to hooks as `controller`
    resync_period: float | None = None
    source: str = "cluster"  # a file path, or "cluster"
    warnings: tuple[str, ...] = ()  # fields read and ignored, named

    @property
    def kind(self) -> str:
        return KIND


def _resource(fields: Fields) -> ResourceRef:
    fields.check_keys({"apiVersion", "resource"})
    return ResourceRef(fields.string("apiVersion"), fields.string("resource"))


def parse_map_controller(
    obj: dict[str, Any], source: str = "cluster", base_dir: str | None = None
) -> MapController:
    """Validate a MapController object; SpecError names the controller and the field.

    `base_dir` (the directory of the file it came from) is where command hooks run by default.
    """
    name, where, spec = controller_spec(obj, KIND, source)
    spec.check_keys(
        {
            "parentResource",
            "inputResources",
            "outputResources",
            "hooks",
            "resyncPeriodSeconds",
            "endpointConfigs",
        }
    )
    if not spec.has("parentResource"):
        raise spec.error("parentResource", "is required")
    parent = _resource(spec.child("parentResource"))
    inputs = tuple(_resource(r) for r in spec.children("inputResources"))
    if not inputs:
        raise spec.error("inputResources", "is required: at least one resource")
    no_repeats(spec, "inputResources", inputs)
    outputs = tuple(owned_rule(r) for r in spec.children("outputResources"))
    if not outputs:
        raise spec.error("outputResources", "is required: at least one resource")
    no_repeats(spec, "outputResources", outputs)
    hooks = spec.child("hooks")
    hooks.check_keys({"map", "tombstone"})
    endpoints = parse_endpoint_configs(spec)
    map_hook = optional_hook(hooks, "map", where, base_dir, endpoints)
    if map_hook is None:
        raise hooks.error("map", "is required")
    tombstone = optional_hook(hooks, "tombstone", where, base_dir, endpoints)
    return MapController(
        name=name,
        parent=parent,
        inputs=inputs,
        outputs=outputs,
        hooks=MapHooks(map=map_hook, tombstone=tombstone),
        raw=obj,
        resync_period=spec.number("resyncPeriodSeconds", minimum=0),
        source=source,
        warnings=tuple(spec.notes),
    )


__all__ = [
    "KIND",
    "MapController",
    "MapHooks",
    "OutputRule",
    "ResourceRef",
    "parse_map_controller",
]
