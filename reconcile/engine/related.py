"""The customize hook's `relatedResources` rules, read and matched as Metacontroller does
(`pkg/controller/common/customize/manager.go`): by labels, by namespace and labels, by
namespace and names, or by namespace selector; a v1 hook of a namespaced parent sees its own
namespace only, a v2 hook (or a cluster-scoped parent) any namespace the rule allows."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any

from reconcile.engine.responses import ResponseError, unknown_fields
from reconcile.objects.meta import Obj, name_of, namespace_of
from reconcile.objects.selectors import LabelSelector, SelectorError, label_selector_from_spec
from reconcile.records import dataclass

RELATED_FIELDS = (
    "apiVersion",
    "resource",
    "labelSelector",
    "namespaceSelector",
    "namespace",
    "names",
)
CUSTOMIZE_FIELDS = ("relatedResources",)


class Selection(StrEnum):
    LABELS = "labels"
    NAMESPACE_AND_LABELS = "namespace and labels"
    NAMESPACE_AND_NAMES = "namespace and names"
    NAMESPACE_SELECTOR = "namespace selector"


@dataclass(frozen=True)
class RelatedRule:
    """From the customize hook: objects the sync hook wants to see without owning them."""

    api_version: str
    resource: str
    selector: LabelSelector | None = None  # None: every label set
    namespace_selector: LabelSelector | None = None
    namespace: str = ""
    names: tuple[str, ...] = ()

    @property
    def selection(self) -> Selection:
        if self.namespace_selector is not None:
            return Selection.NAMESPACE_SELECTOR
        if self.selector is not None and self.namespace:
            return Selection.NAMESPACE_AND_LABELS
        if self.namespace or self.names:
            return Selection.NAMESPACE_AND_NAMES
        return Selection.LABELS


class RuleMismatch(ValueError):
    """A rule Metacontroller refuses for this parent (the hook's error, not the run's)."""


def parse_customize_response(data: dict[str, Any], *, strict: bool = False) -> list[RelatedRule]:
    problems: list[str] = unknown_fields(data, CUSTOMIZE_FIELDS) if strict else []
    raw = data.get("relatedResources")
    if raw is None:
        raw = []
    if not isinstance(raw, list):
        raise ResponseError("customize", ["relatedResources: must be a list"])
    rules: list[RelatedRule] = []
    for i, item in enumerate(raw):
        where = f"relatedResources[{i}]"
        if not isinstance(item, dict):
            problems.append(f"{where}: must be an object")
            continue
        if strict:
            problems += unknown_fields(item, RELATED_FIELDS, f"{where}.")
        rule = _rule(item, where, problems)
        if rule is not None:
            rules.append(rule)
    if problems:
        raise ResponseError("customize", problems)
    return rules


def _rule(item: dict[str, Any], where: str, problems: list[str]) -> RelatedRule | None:
    api_version, resource = item.get("apiVersion"), item.get("resource")
    found = len(problems)
    if not isinstance(api_version, str) or not api_version:
        problems.append(f"{where}.apiVersion: is required")
    if not isinstance(resource, str) or not resource:
        problems.append(f"{where}.resource: is required")
    names = item.get("names") or []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        problems.append(f"{where}.names: must be a list of strings")
    namespace = item.get("namespace") or ""
    if not isinstance(namespace, str):
        problems.append(f"{where}.namespace: must be a string")
    selectors: dict[str, LabelSelector | None] = {}
    for field in ("labelSelector", "namespaceSelector"):
        spec = item.get(field)
        try:
            selectors[field] = (
                None if spec is None else label_selector_from_spec(spec, f"{where}.{field}")
            )
        except SelectorError as exc:
            problems.append(str(exc))
    if len(problems) > found:
        return None
    if names and (
        item.get("labelSelector") is not None or item.get("namespaceSelector") is not None
    ):
        problems.append(
            f"{where}: names cannot be combined with labelSelector or namespaceSelector"
        )
        return None
    if namespace and item.get("namespaceSelector") is not None:
        problems.append(f"{where}: namespace cannot be combined with namespaceSelector")
        return None
    assert isinstance(api_version, str) and isinstance(resource, str)
    return RelatedRule(
        api_version=api_version,
        resource=resource,
        selector=selectors.get("labelSelector"),
        namespace_selector=selectors.get("namespaceSelector"),
        namespace=str(namespace),
        names=tuple(names),
    )


def rule_matches(
    rule: RelatedRule,
    obj: Obj,
    *,
    uniform: bool,
    parent: Obj,
    parent_namespaced: bool,
    related_namespaced: bool,
    namespace_labels: Callable[[str], Mapping[str, str] | None],
) -> bool:
    """Whether `obj` (of the rule's resource) is related to `parent` by `rule`; RuleMismatch
    for a rule Metacontroller refuses for this parent. `uniform`: the hook is v2."""
    confined = not uniform and parent_namespaced  # a v1 hook of a namespaced parent
    same_namespace = not related_namespaced or namespace_of(obj) == namespace_of(parent)
    selection = rule.selection
    labels_match = rule.selector is None or rule.selector.matches(obj)
    if selection is Selection.LABELS:
        return labels_match and (not confined or same_namespace)
    if selection is Selection.NAMESPACE_AND_LABELS:
        if confined and rule.namespace != namespace_of(parent):
            raise _outside_parent_namespace(rule, parent)
        in_namespace = not related_namespaced or namespace_of(obj) == rule.namespace
        return labels_match and in_namespace
    if selection is Selection.NAMESPACE_SELECTOR:
        if confined:
            raise RuleMismatch("namespaceSelector needs a v2 hook for a namespaced parent")
        if not related_namespaced:
            raise RuleMismatch("namespaceSelector selects namespaced resources only")
        found = namespace_labels(namespace_of(obj))
        assert rule.namespace_selector is not None
        return (
            labels_match
            and found is not None
            and rule.namespace_selector.matches_labels(dict(found))
        )
    # by namespace and names
    if confined:
        if rule.namespace and rule.namespace != namespace_of(parent):
            raise _outside_parent_namespace(rule, parent)
        if not same_namespace:
            return False
    elif related_namespaced and rule.namespace and namespace_of(obj) != rule.namespace:
        return False
    return not rule.names or name_of(obj) in rule.names


def _outside_parent_namespace(rule: RelatedRule, parent: Obj) -> RuleMismatch:
    return RuleMismatch(
        f"namespace {rule.namespace!r} is not the parent's namespace "
        f"{namespace_of(parent)!r} (a v1 hook of a namespaced parent)"
    )


def related_namespace(
    rule: RelatedRule, *, uniform: bool, parent: Obj, parent_namespaced: bool
) -> str | None:
    """The one namespace the rule's objects can be in (None: any), to list no more than that."""
    if not uniform and parent_namespaced:
        return namespace_of(parent)
    if rule.selection in (Selection.NAMESPACE_AND_LABELS, Selection.NAMESPACE_AND_NAMES):
        return rule.namespace or None
    return None


__all__ = [
    "RelatedRule",
    "RuleMismatch",
    "Selection",
    "parse_customize_response",
    "related_namespace",
    "rule_matches",
]
