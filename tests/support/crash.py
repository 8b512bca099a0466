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
    """Dies at its (`writes_allowed` + 1)-th write: before sending it, or with `after` once the
    write is done (the server did it; the process never learns). `where` says which write."""

    def __init__(self, inner: Cluster, writes_allowed: int, *, after: bool = False) -> None:
        self.inner = inner
        self.stats = inner.stats
        self.left = writes_allowed
        self.after = after
        self.where = ""

    def _write(self, what: str = "") -> None:
        if self.left <= 0 and not self.after:
            self.where = f"before {what}"
            raise Crash()
        self.left -= 1

    def _done(self, what: str) -> None:
        if self.after and self.left < 0:
            self.where = f"after {what}"
            raise Crash()

    def discover(self, api_version: str, resource: str) -> ResourceInfo:
        return self.inner.discover(api_version, resource)

    def preferred_version(self, group: str) -> str:
        return self.inner.preferred_version(group)

    def list(self, resource: ResourceInfo, **kwargs: Any) -> ObjectList:
        return self.inner.list(resource, **kwargs)

    def get(self, resource: ResourceInfo, name: str, *, namespace: str | None = None) -> Obj:
        return self.inner.get(resource, name, namespace=namespace)

    def create(self, resource: ResourceInfo, obj: Obj) -> Obj:
        what = f"create {resource.resource}"
        self._write(what)
        created = self.inner.create(resource, obj)
        self._done(what)
        return created

    def update(self, resource: ResourceInfo, obj: Obj) -> Obj:
        what = f"update {resource.resource}"
        self._write(what)
        updated = self.inner.update(resource, obj)
        self._done(what)
        return updated

    def update_status(self, resource: ResourceInfo, obj: Obj) -> Obj:
        what = f"update {resource.resource}/status"
        self._write(what)
        updated = self.inner.update_status(resource, obj)
        self._done(what)
        return updated

    def delete(self, resource: ResourceInfo, name: str, **kwargs: Any) -> None:
        what = f"delete {resource.resource}"
        self._write(what)
        self.inner.delete(resource, name, **kwargs)
        self._done(what)
