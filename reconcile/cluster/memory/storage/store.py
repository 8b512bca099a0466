"""The object store: every object by resource and key, with the indexes the garbage collector
and the namespace controller need (by uid, dependents by owner uid, objects per namespace).

Stored dicts are never modified in place: a write stores a new dict. That lets list snapshots
hold references cheaply; callers copy on the way out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from reconcile.cluster.types import Obj
from reconcile.objects.meta import metadata, owner_references


def object_key(namespace: str, name: str) -> str:
    """The key an object sorts by, like the tail of its etcd key: `ns/name`, or `name`."""
    return f"{namespace}/{name}" if namespace else name


class ObjectStore:
    def __init__(self) -> None:
        self.resource_version = 0
        self._objects: dict[str, dict[str, Obj]] = {}
        self._by_uid: dict[str, tuple[str, str]] = {}
        self._dependents: dict[str, set[str]] = {}
        self._per_namespace: Counter[str] = Counter()

    def next_resource_version(self) -> str:
        self.resource_version += 1
        return str(self.resource_version)

    # --- reads ---------------------------------------------------------------------------------

    def get(self, group_resource: str, namespace: str, name: str) -> Obj | None:
        return self._objects.get(group_resource, {}).get(object_key(namespace, name))

    def by_uid(self, uid: str) -> tuple[str, Obj] | None:
        """(group_resource, object) of the object with this uid."""
        where = self._by_uid.get(uid)
        if where is None:
            return None
        group_resource, key = where
        return group_resource, self._objects[group_resource][key]

    def items(self, group_resource: str, namespace: str | None = None) -> list[tuple[str, Obj]]:
        """(key, object) pairs in key order, optionally of one namespace."""
        objects = self._objects.get(group_resource, {})
        if namespace is None:
            return sorted(objects.items())
        prefix = namespace + "/"
        return sorted((k, o) for k, o in objects.items() if k.startswith(prefix))

    def count(self, group_resource: str) -> int:
        return len(self._objects.get(group_resource, {}))

    def count_in_namespace(self, namespace: str) -> int:
        return self._per_namespace[namespace]

    def in_namespace(self, namespace: str) -> list[tuple[str, Obj]]:
        """(group_resource, object) of everything in a namespace."""
        if not self._per_namespace[namespace]:
            return []
        prefix = namespace + "/"
        return [
            (gr, obj)
            for gr, objects in sorted(self._objects.items())
            for key, obj in sorted(objects.items())
            if key.startswith(prefix)
        ]

    def dependents(self, owner_uid: str) -> list[tuple[str, Obj]]:
        """(group_resource, object) of every object with an owner reference to `owner_uid`."""
        out = []
        for uid in sorted(self._dependents.get(owner_uid, ())):
            found = self.by_uid(uid)
            if found is not None:
                out.append(found)
        return out

    def has_dependents(self, owner_uid: str) -> bool:
        return bool(self._dependents.get(owner_uid))

    def all(self) -> Iterator[tuple[str, Obj]]:
        for group_resource in sorted(self._objects):
            for _, obj in sorted(self._objects[group_resource].items()):
                yield group_resource, obj

    # --- writes --------------------------------------------------------------------------------

    def put(self, group_resource: str, obj: Obj) -> Obj | None:
        """Store `obj` (which the store now owns); returns the object it replaced."""
        meta = metadata(obj)
        namespace = str(meta.get("namespace") or "")
        key = object_key(namespace, str(meta["name"]))
        uid = str(meta["uid"])
        objects = self._objects.setdefault(group_resource, {})
        old = objects.get(key)
        objects[key] = obj
        if old is None:
            self._by_uid[uid] = (group_resource, key)
            if namespace:
                self._per_namespace[namespace] += 1
        self._index_owners(uid, old, obj)
        return old

    def remove(self, group_resource: str, namespace: str, name: str) -> Obj | None:
        objects = self._objects.get(group_resource, {})
        old = objects.pop(object_key(namespace, name), None)
        if old is None:
            return None
        if not objects:
            del self._objects[group_resource]
        uid = str(metadata(old)["uid"])
        self._by_uid.pop(uid, None)
        if namespace:
            self._per_namespace[namespace] -= 1
            if self._per_namespace[namespace] <= 0:
                del self._per_namespace[namespace]
        self._index_owners(uid, old, None)
        return old

    def _index_owners(self, uid: str, old: Obj | None, new: Obj | None) -> None:
        before = {str(r.get("uid")) for r in owner_references(old)} if old else set()
        after = {str(r.get("uid")) for r in owner_references(new)} if new else set()
        for owner in before - after:
            dependents = self._dependents.get(owner)
            if dependents is not None:
                dependents.discard(uid)
                if not dependents:
                    del self._dependents[owner]
        for owner in after - before:
            self._dependents.setdefault(owner, set()).add(uid)
