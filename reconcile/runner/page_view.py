"""One page of one type's objects, seen as a pass's snapshot: what a kind's `select` reads, to
tell whether a page holds a parent it would sync before the rest is listed (`Snapshot.follow`).
Every other type is empty: nothing is listed for it."""

from __future__ import annotations

from reconcile.objects.meta import Obj, controller_ref, name_of, namespace_of
from reconcile.objects.resource import ResourceInfo


class PageView:
    def __init__(self, resource: ResourceInfo, page: list[Obj]) -> None:
        self._resource = resource
        self._page = page

    def objects(self, resource: ResourceInfo) -> list[Obj]:
        return self._page if resource == self._resource else []

    def in_namespace(self, resource: ResourceInfo, namespace: str | None) -> list[Obj]:
        objects = self.objects(resource)
        if namespace is None or not resource.namespaced:
            return objects
        return [o for o in objects if namespace_of(o) == namespace]

    def controlled_by(self, resource: ResourceInfo, owner_uid: str) -> list[Obj]:
        return [
            o
            for o in self.objects(resource)
            if (ref := controller_ref(o)) is not None and str(ref.get("uid")) == owner_uid
        ]

    def claim_candidates(
        self, resource: ResourceInfo, owner_uid: str, namespace: str | None
    ) -> list[Obj]:
        return [
            o
            for o in self.in_namespace(resource, namespace)
            if (ref := controller_ref(o)) is None or str(ref.get("uid")) == owner_uid
        ]

    def find(self, resource: ResourceInfo, namespace: str, name: str) -> Obj | None:
        key = namespace if resource.namespaced else ""
        return next(
            (o for o in self.objects(resource) if (namespace_of(o), name_of(o)) == (key, name)),
            None,
        )
