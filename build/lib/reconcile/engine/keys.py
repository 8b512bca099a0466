"""How children and related objects are keyed in hook requests (Metacontroller's conventions)."""

from __future__ import annotations

from reconcile.objects.meta import Obj, name_of, namespace_of


def relative_key(parent_namespaced: bool, obj: Obj) -> str:
    """`name`, or `namespace/name` for a namespaced object under a cluster-scoped parent."""
    namespace = namespace_of(obj)
    if not parent_namespaced and namespace:
        return f"{namespace}/{name_of(obj)}"
    return name_of(obj)
