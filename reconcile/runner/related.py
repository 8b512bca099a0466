"""Related objects a customize hook asks for (`relatedResources`), read from the pass's
snapshot: the same rules for CompositeController parents and DecoratorController targets."""

from __future__ import annotations

from reconcile.cluster.errors import ApiError
from reconcile.cluster.protocol import Cluster
from reconcile.engine.keys import relative_key
from reconcile.engine.responses import RelatedRule, ResponseError
from reconcile.objects.meta import Obj, name_of, namespace_of
from reconcile.objects.resource import ResourceInfo
from reconcile.runner.snapshot import Snapshot


def related_objects(
    cluster: Cluster,
    snapshot: Snapshot,
    rules: list[RelatedRule],
    owner: Obj,
    owner_namespaced: bool,
) -> dict[str, dict[str, Obj]]:
    """`{<Kind>.<apiVersion>: {key: object}}` for every rule; ResponseError for a rule naming a
    resource the server does not have."""
    related: dict[str, dict[str, Obj]] = {}
    for i, rule in enumerate(rules):
        try:
            resource = cluster.discover(rule.api_version, rule.resource)
        except ApiError as exc:
            raise ResponseError("customize", [f"relatedResources[{i}]: {exc.message}"]) from exc
        group = related.setdefault(resource.key, {})
        for obj in _select(snapshot, resource, rule, owner, owner_namespaced):
            group[relative_key(owner_namespaced, obj)] = obj
    return related


def _select(
    snapshot: Snapshot, resource: ResourceInfo, rule: RelatedRule, owner: Obj, namespaced: bool
) -> list[Obj]:
    namespace: str | None = None
    if resource.namespaced:
        # A namespaced owner sees related objects of its own namespace only.
        namespace = namespace_of(owner) if namespaced else rule.namespace
    objects = snapshot.in_namespace(resource, namespace)
    if rule.selector is not None:
        return [o for o in objects if rule.selector.matches(o)]
    names = set(rule.names)
    return [o for o in objects if not names or name_of(o) in names]
