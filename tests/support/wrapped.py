"""A `Cluster` that passes every request to another, for test doubles that only need to step
in around reads or writes (crashes, faults, watches): they override `read` and `write`."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, Self, TypeVar

from reconcile.cluster.protocol import Cluster
from reconcile.cluster.types import Obj, ObjectList, ResourceInfo

_T = TypeVar("_T")


class ForwardingCluster:
    def __init__(self, inner: Cluster) -> None:
        self.inner = inner
        self.stats = inner.stats

    def read(self, call: Callable[[], _T]) -> _T:
        return call()

    def write(self, what: str, body: Obj | None, call: Callable[[], _T]) -> _T:
        """`what`: `create configmaps`, `update catsets/status`, ...; `body`: what is sent."""
        return call()

    def discover(self, api_version: str, resource: str) -> ResourceInfo:
        return self.inner.discover(api_version, resource)

    def preferred_version(self, group: str) -> str:
        return self.inner.preferred_version(group)

    def server_release(self) -> str:
        return self.inner.server_release()

    def served_resources(self) -> list[ResourceInfo]:
        return self.inner.served_resources()

    def list(self, resource: ResourceInfo, **kwargs: Any) -> ObjectList:
        return self.read(lambda: self.inner.list(resource, **kwargs))

    def get(self, resource: ResourceInfo, name: str, *, namespace: str | None = None) -> Obj:
        return self.read(lambda: self.inner.get(resource, name, namespace=namespace))

    def create(self, resource: ResourceInfo, obj: Obj) -> Obj:
        return self.write(
            f"create {resource.resource}", obj, lambda: self.inner.create(resource, obj)
        )

    def update(self, resource: ResourceInfo, obj: Obj) -> Obj:
        return self.write(
            f"update {resource.resource}", obj, lambda: self.inner.update(resource, obj)
        )

    def update_status(self, resource: ResourceInfo, obj: Obj) -> Obj:
        return self.write(
            f"update {resource.resource}/status",
            obj,
            lambda: self.inner.update_status(resource, obj),
        )

    def apply(self, resource: ResourceInfo, obj: Obj, **kwargs: Any) -> Obj:
        return self.write(
            f"patch {resource.resource}", obj, lambda: self.inner.apply(resource, obj, **kwargs)
        )

    def delete(self, resource: ResourceInfo, name: str, **kwargs: Any) -> None:
        self.write(
            f"delete {resource.resource}", None, lambda: self.inner.delete(resource, name, **kwargs)
        )

    def dry_run_view(self) -> Self:
        """The same double around the inner cluster's dry-run view."""
        view = copy.copy(self)
        view.inner = self.inner.dry_run_view()
        return view
