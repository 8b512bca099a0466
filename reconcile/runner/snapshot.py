"""One pass's view of the cluster: each resource type listed once (paginated), on first use,
and indexed by namespace. Thread-safe: parents share it."""

from __future__ import annotations

import threading
from collections import defaultdict

from reconcile.cluster.protocol import Cluster, list_all
from reconcile.objects.meta import Obj, namespace_of
from reconcile.objects.resource import ResourceInfo


class Snapshot:
    def __init__(self, cluster: Cluster, page_size: int = 500) -> None:
        self._cluster = cluster
        self._page_size = page_size
        self._lock = threading.Lock()
        self._locks: dict[ResourceInfo, threading.Lock] = {}
        self._objects: dict[ResourceInfo, list[Obj]] = {}
        self._by_namespace: dict[ResourceInfo, dict[str, list[Obj]]] = {}

    def _resource_lock(self, resource: ResourceInfo) -> threading.Lock:
        with self._lock:
            return self._locks.setdefault(resource, threading.Lock())

    def objects(self, resource: ResourceInfo) -> list[Obj]:
        """Every object of the type (all namespaces); listed once per snapshot."""
        with self._resource_lock(resource):
            if resource not in self._objects:
                items = list_all(self._cluster, resource, page_size=self._page_size).items
                index: dict[str, list[Obj]] = defaultdict(list)
                for obj in items:
                    index[namespace_of(obj)].append(obj)
                self._objects[resource] = items
                self._by_namespace[resource] = dict(index)
            return self._objects[resource]

    def in_namespace(self, resource: ResourceInfo, namespace: str | None) -> list[Obj]:
        """Objects in one namespace; `None` means all (for a cluster-scoped parent)."""
        objects = self.objects(resource)
        if namespace is None or not resource.namespaced:
            return objects
        return self._by_namespace[resource].get(namespace, [])

    @property
    def listed(self) -> list[ResourceInfo]:
        with self._lock:
            return list(self._objects)
