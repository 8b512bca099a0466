"""A process crash at a chosen point: a `Cluster` that lets N mutating requests through and
then dies (raises `Crash`, which nothing in reconcile catches), like a SIGKILL between two
requests. The requests themselves are real; only the process "stops"."""

from __future__ import annotations

from typing import Any

from reconcile.cluster.protocol import Cluster
from reconcile.cluster.types import Obj, ObjectList, ResourceInfo


class Crash(BaseException):  # BaseException: no `except Exception` in the code under test
    pass


class CrashingCluster:
    def __init__(self, inner: Cluster, writes_allowed: int) -> None:
        self.inner = inner
        self.stats = inner.stats
        self.left = writes_allowed

    def _write(self) -> None:
        if self.left <= 0:
            raise Crash()
        self.left -= 1

    def discover(self, api_version: str, resource: str) -> ResourceInfo:
        return self.inner.discover(api_version, resource)

    def preferred_version(self, group: str) -> str:
        return self.inner.preferred_version(group)

    def list(self, resource: ResourceInfo, **kwargs: Any) -> ObjectList:
        return self.inner.list(resource, **kwargs)

    def get(self, resource: ResourceInfo, name: str, *, namespace: str | None = None) -> Obj:
        return self.inner.get(resource, name, namespace=namespace)

    def create(self, resource: ResourceInfo, obj: Obj) -> Obj:
        self._write()
        return self.inner.create(resource, obj)

    def update(self, resource: ResourceInfo, obj: Obj) -> Obj:
        self._write()
        return self.inner.update(resource, obj)

    def update_status(self, resource: ResourceInfo, obj: Obj) -> Obj:
        self._write()
        return self.inner.update_status(resource, obj)

    def delete(self, resource: ResourceInfo, name: str, **kwargs: Any) -> None:
        self._write()
        self.inner.delete(resource, name, **kwargs)
