"""CompositeController (metacontroller.k8s.io/v1alpha1): the typed spec and its parser."""

from __future__ import annotations

from typing import Any

from reconcile.objects.selectors import LabelSelector, SelectorError, label_selector_from_spec
from reconcile.records import dataclass
from reconcile.specs.controller import (
    OwnedRule,
    UpdateMethod,
    check_selector_keys,
    controller_hooks,
    controller_spec,
    no_repeats,
)
from reconcile.specs.errors import SpecError
from reconcile.specs.fields import Fields
from reconcile.specs.hooks import HookSpec

GROUP = "metacontroller.k8s.io"
API_VERSION = f"{GROUP}/v1alpha1"
KIND = "CompositeController"


@dataclass(frozen=True)
class ConditionCheck:
    type: str
    status: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class ParentRule:
    api_version: str
    resource: str
    label_selector: LabelSelector
    revision_field_paths: tuple[str, ...] = ("spec",)


@dataclass(frozen=True)
class ChildRule(OwnedRule):
    """A child resource: owned objects whose update may roll, gated by `status_checks`."""

    status_checks: tuple[ConditionCheck, ...] = ()


@dataclass(frozen=True)
class CompositeHooks:
    sync: HookSpec
    finalize: HookSpec | None = None
    customize: HookSpec | None = None


@dataclass(frozen=True)
class CompositeController:
    name: str
    parent: ParentRule
    children: tuple[ChildRule, ...]
    hooks: CompositeHooks
    raw: dict[str, Any]  # the whole object, sent to hooks as `controller`
    resync_period: float | None = None
    generate_selector: bool = False
    source: str = "cluster"  # a file path, or "cluster"
    warnings: tuple[str, ...] = ()  # fields read and ignored, named

    @property
    def finalizer(self) -> str:
        return f"metacontroller.io/compositecontroller-{self.name}"

    @property
    def rolling(self) -> bool:
        return any(rule.update_method.rolling for rule in self.children)


def _selector(fields: Fields, key: str) -> LabelSelector:
    check_selector_keys(fields, key)
    try:
        return label_selector_from_spec(fields.data.get(key), fields.at(key))
    except SelectorError as exc:
        raise SpecError.at_path(fields.where, fields.at(key), str(exc)) from exc


def _parent(fields: Fields) -> ParentRule:
    # ignoreStatusChanges (Metacontroller 4.x) only filters watch events; a batch run relists
    # everything anyway, so it is accepted and has no effect.
    fields.check_keys(
        {"apiVersion", "resource", "labelSelector", "revisionHistory", "ignoreStatusChanges"}
    )
    fields.boolean("ignoreStatusChanges")
    history = fields.child("revisionHistory")
    history.check_keys({"fieldPaths"})
    paths = history.strings("fieldPaths") or ["spec"]
    for i, path in enumerate(paths):
        if not path or path.startswith(".") or path.endswith(".") or ".." in path:
            raise history.error(f"fieldPaths[{i}]", f"{path!r} is not a dotted field path")
    return ParentRule(
        api_version=fields.string("apiVersion"),
        resource=fields.string("resource"),
        label_selector=_selector(fields, "labelSelector"),
        revision_field_paths=tuple(paths),
    )


def _child(fields: Fields) -> ChildRule:
    fields.check_keys({"apiVersion", "resource", "updateStrategy"})
    strategy = fields.child("updateStrategy")
    strategy.check_keys({"method", "statusChecks"})
    method_text = strategy.string("method", UpdateMethod.ON_DELETE.value)
    try:
        method = UpdateMethod(method_text)
    except ValueError as exc:
        choices = ", ".join(m.value for m in UpdateMethod)
        raise strategy.error("method", f"{method_text!r} is not one of {choices}") from exc
    checks = strategy.child("statusChecks")
    checks.check_keys({"conditions"})
    conditions = []
    for condition in checks.children("conditions"):
        condition.check_keys({"type", "status", "reason"})
        conditions.append(
            ConditionCheck(
                type=condition.string("type"),
                status=condition.optional_string("status"),
                reason=condition.optional_string("reason"),
            )
        )
    return ChildRule(
        api_version=fields.string("apiVersion"),
        resource=fields.string("resource"),
        update_method=method,
        status_checks=tuple(conditions),
    )


def parse_composite_controller(
    obj: dict[str, Any], source: str = "cluster", base_dir: str | None = None
) -> CompositeController:
    """Validate a CompositeController object; SpecError names the controller and the field.

    `base_dir` (the directory of the file it came from) is where command hooks run by default.
    """
    name, where, spec = controller_spec(obj, KIND, source)
    spec.check_keys(
        {
            "parentResource",
            "childResources",
            "hooks",
            "resyncPeriodSeconds",
            "generateSelector",
            "endpointConfigs",
        }
    )
    if not spec.has("parentResource"):
        raise spec.error("parentResource", "is required")
    children = tuple(_child(c) for c in spec.children("childResources"))
    no_repeats(spec, "childResources", children)
    sync, finalize, customize = controller_hooks(spec, where, base_dir)
    parent = _parent(spec.child("parentResource"))
    return CompositeController(
        name=name,
        parent=parent,
        children=children,
        hooks=CompositeHooks(sync=sync, finalize=finalize, customize=customize),
        raw=obj,
        resync_period=spec.number("resyncPeriodSeconds", minimum=0),
        generate_selector=spec.boolean("generateSelector"),
        source=source,
        warnings=tuple(spec.notes),
    )
