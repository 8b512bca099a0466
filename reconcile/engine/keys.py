"""How children and related objects are keyed in hook requests (Metacontroller's conventions)."""

from __future__ import annotations

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
