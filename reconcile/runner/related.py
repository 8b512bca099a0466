"""Related objects a customize hook asks for (`relatedResources`), read from the pass's
snapshot and matched by Metacontroller's rules (`engine/related.py`): the same for
CompositeController parents and DecoratorController targets."""

from __future__ import annotations

from reconcile.cluster.errors import ApiError
from reconcile.cluster.protocol import Cluster
from reconcile.engine.keys import relative_key
from reconcile.engine.related import (
    RelatedRule,
    RuleMismatch,
    Selection,
    related_namespace,
    rule_matches,
)
from reconcile.engine.responses import ResponseError
from reconcile.objects.meta import Obj, labels_of, name_of
from reconcile.runner.snapshot import Snapshot


def related_objects(
    cluster: Cluster,
    snapshot: Snapshot,
    rules: list[RelatedRule],
    owner: Obj,
    owner_namespaced: bool,
    *,
    uniform: bool = False,
) -> dict[str, dict[str, Obj]]:
    """`{<Kind>.<apiVersion>: {key: object}}` for every rule (keyed as v1 keys them);
    ResponseError for a rule naming a resource the server does not have, or one Metacontroller
    refuses for this parent. `uniform`: the customize hook is v2."""
    related: dict[str, dict[str, Obj]] = {}
    namespaces: dict[str, dict[str, str]] | None = None
    for i, rule in enumerate(rules):
        try:
            resource = cluster.discover(rule.api_version, rule.resource)
        except ApiError as exc:
            raise ResponseError("customize", [f"relatedResources[{i}]: {exc.message}"]) from exc
        if rule.selection is Selection.NAMESPACE_SELECTOR and namespaces is None:
            listed = snapshot.objects(cluster.discover("v1", "namespaces"))
            namespaces = {name_of(ns): labels_of(ns) for ns in listed}
        scope = related_namespace(
            rule, uniform=uniform, parent=owner, parent_namespaced=owner_namespaced
        )
        group = related.setdefault(resource.key, {})
        known = namespaces or {}
        for obj in snapshot.in_namespace(resource, scope if resource.namespaced else None):
            try:
                matched = rule_matches(
                    rule,
                    obj,
                    uniform=uniform,
                    parent=owner,
                    parent_namespaced=owner_namespaced,
                    related_namespaced=resource.namespaced,
                    namespace_labels=known.get,
                )
            except RuleMismatch as exc:
                raise ResponseError("customize", [f"relatedResources[{i}]: {exc}"]) from None
            if matched:
                group[relative_key(owner_namespaced, obj)] = obj
    return related
