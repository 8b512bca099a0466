"""DecoratorController (metacontroller.k8s.io/v1alpha1): the typed spec and its parser."""

from __future__ import annotations

from typing import Any

from reconcile.objects.selectors import (
    LabelSelector,
    Requirement,
    SelectorError,
    label_selector_from_spec,
)
from reconcile.records import dataclass
from reconcile.specs.composite import GROUP
from reconcile.specs.controller import (
    OwnedRule,
    check_selector_keys,
    controller_hooks,
    controller_spec,
    no_repeats,
    owned_rule,
)
from reconcile.specs.errors import SpecError
from reconcile.specs.fields import Fields
from reconcile.specs.hooks import HookSpec

KIND = "DecoratorController"
# Attachments carry this annotation with the decorator's name: without it, an object the target
# controls is not the decorator's.
DECORATOR_ANNOTATION = "metacontroller.k8s.io/decorator-controller"
# Attachments: objects of a resource the decorator creates and the target owns.
AttachmentRule = OwnedRule
ANNOTATION_SELECTOR_FIELDS = frozenset({"matchAnnotations", "matchExpressions"})


@dataclass(frozen=True)
class ResourceRule:
    """Targets: objects of this resource matching both selectors. A rule matches by API group
    and resource, whatever the version."""

    api_version: str
    resource: str
    label_selector: LabelSelector
    annotation_selector: LabelSelector

    def matches(self, obj: dict[str, Any]) -> bool:
        meta = obj.get("metadata") or {}
        labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
        annotations = {str(k): str(v) for k, v in (meta.get("annotations") or {}).items()}
        return self.label_selector.matches_labels(labels) and (
            self.annotation_selector.matches_labels(annotations)
        )


@dataclass(frozen=True)
class DecoratorHooks:
    sync: HookSpec
    finalize: HookSpec | None = None
    customize: HookSpec | None = None


@dataclass(frozen=True)
class DecoratorController:
    name: str
    resources: tuple[ResourceRule, ...]
    attachments: tuple[AttachmentRule, ...]
    hooks: DecoratorHooks
    raw: dict[str, Any]  # the whole object, sent to hooks as `controller`
    resync_period: float | None = None
    source: str = "cluster"  # a file path, or "cluster"
    warnings: tuple[str, ...] = ()  # fields read and ignored, named

    @property
    def finalizer(self) -> str:
        return f"metacontroller.io/decoratorcontroller-{self.name}"

    @property
    def kind(self) -> str:
        return KIND


def _label_selector(fields: Fields, key: str) -> LabelSelector:
    check_selector_keys(fields, key)
    try:
        return label_selector_from_spec(fields.data.get(key), fields.at(key))
    except SelectorError as exc:
        raise SpecError.at_path(fields.where, fields.at(key), str(exc)) from exc


def _annotation_selector(fields: Fields) -> LabelSelector:
    """`matchAnnotations` / `matchExpressions`, read as a label selector over annotations
    (annotation values are not label values: any string may be matched)."""
    check_selector_keys(fields, "annotationSelector", ANNOTATION_SELECTOR_FIELDS)
    selector = fields.child("annotationSelector")
    requirements = [
        Requirement(key, "Equals", (value,))
        for key, value in sorted(selector.string_map("matchAnnotations").items())
    ]
    try:
        expressions = label_selector_from_spec(
            {"matchExpressions": selector.data.get("matchExpressions") or []},
            fields.at("annotationSelector"),
        )
    except SelectorError as exc:
        where = fields.at("annotationSelector")
        raise SpecError.at_path(selector.where, where, str(exc)) from exc
    return LabelSelector((*requirements, *expressions.requirements))


def _resource(fields: Fields) -> ResourceRule:
    # ignoreStatusChanges (Metacontroller 4.x) only filters watch events; a batch run relists
    # everything anyway, so it is accepted and has no effect.
    fields.check_keys(
        {"apiVersion", "resource", "labelSelector", "annotationSelector", "ignoreStatusChanges"}
    )
    fields.boolean("ignoreStatusChanges")
    return ResourceRule(
        api_version=fields.string("apiVersion"),
        resource=fields.string("resource"),
        label_selector=_label_selector(fields, "labelSelector"),
        annotation_selector=_annotation_selector(fields),
    )


def parse_decorator_controller(
    obj: dict[str, Any], source: str = "cluster", base_dir: str | None = None
) -> DecoratorController:
    """Validate a DecoratorController object; SpecError names the controller and the field.

    `base_dir` (the directory of the file it came from) is where command hooks run by default.
    """
    name, where, spec = controller_spec(obj, KIND, source)
    spec.check_keys({"resources", "attachments", "hooks", "resyncPeriodSeconds", "endpointConfigs"})
    resources = tuple(_resource(r) for r in spec.children("resources"))
    if not resources:
        raise spec.error("resources", "is required: at least one rule")
    attachments = tuple(owned_rule(a, rolling_as_plain=True) for a in spec.children("attachments"))
    no_repeats(spec, "attachments", attachments)
    sync, finalize, customize = controller_hooks(spec, where, base_dir)
    return DecoratorController(
        name=name,
        resources=resources,
        attachments=attachments,
        hooks=DecoratorHooks(sync=sync, finalize=finalize, customize=customize),
        raw=obj,
        resync_period=spec.number("resyncPeriodSeconds", minimum=0),
        source=source,
        warnings=tuple(spec.notes),
    )


__all__ = [
    "DECORATOR_ANNOTATION",
    "GROUP",
    "KIND",
    "AttachmentRule",
    "DecoratorController",
    "DecoratorHooks",
    "ResourceRule",
    "parse_decorator_controller",
]
