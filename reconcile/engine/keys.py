"""How children and related objects are keyed in hook requests (Metacontroller's conventions)."""

from __future__ import annotations

from collections.abc import Mapping

from reconcile.objects.meta import Obj, name_of, namespace_of


def relative_key(parent_namespaced: bool, obj: Obj) -> str:
    """`name`, or `namespace/name` for a namespaced object under a cluster-scoped parent."""
    namespace = namespace_of(obj)
    if not parent_namespaced and namespace:
        return f"{namespace}/{name_of(obj)}"
    return name_of(obj)


def object_key(obj: Obj) -> str:
    """`namespace/name`, or `name` for a cluster-scoped object: unique within one resource."""
    namespace = namespace_of(obj)
    return f"{namespace}/{name_of(obj)}" if namespace else name_of(obj)


def request_key(parent_namespaced: bool, obj: Obj, uniform: bool) -> str:
    """How a hook request keys `obj`: v1's `relative_key`, or v2's uniform `object_key`."""
    return object_key(obj) if uniform else relative_key(parent_namespaced, obj)


def rekeyed(objects: Mapping[str, Obj], uniform: bool) -> dict[str, Obj]:
    """An object map keyed as v1 (`relative_key`) as a request of its hook's version keys it."""
    if not uniform:
        return dict(objects)
    return {object_key(obj): obj for obj in objects.values()}
