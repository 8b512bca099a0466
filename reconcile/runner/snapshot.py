"""One pass's view of the cluster: each resource type listed once (paginated), on first use,
and indexed by namespace. Thread-safe: parents share it.

Objects are kept as planning and the hooks need them, but without the managedFields entries a
pass does not read (`objects.slim`): each page is slimmed as it arrives, so a pass holds the
kept objects and one page whole, never the whole list whole."""

from __future__ import annotations

import threading
from collections import defaultdict

from reconcile.cluster.protocol import Cluster, iter_pages
from reconcile.objects.meta import Obj, controller_ref, name_of, namespace_of
from reconcile.objects.resource import ResourceInfo
from reconcile.objects.slim import SharingTable, slimmed
from reconcile.runner.collector import collector_paused
from reconcile.secret_values import remember_secrets


def managers_to_keep(server_side: bool) -> frozenset[str] | None:
    """Whose managedFields entries a pass keeps: every manager's with server-side apply (moving
    an object over rewrites its whole list, other managers' entries included), else none:
    client-side apply reads none of them (the last-applied annotation says what it applied)."""
    return None if server_side else frozenset()


class _Listing:
    """One resource type as listed: its objects, indexed."""

    __slots__ = ("by_controller", "by_name", "by_namespace", "objects", "orphans")

    def __init__(self, items: list[Obj]) -> None:
        by_namespace: dict[str, list[Obj]] = defaultdict(list)
        by_controller: dict[str, list[Obj]] = defaultdict(list)
        orphans: dict[str, list[Obj]] = defaultdict(list)
        for obj in items:
            namespace = namespace_of(obj)
            by_namespace[namespace].append(obj)
            ref = controller_ref(obj)
            if ref is None:
                orphans[namespace].append(obj)
            else:
                by_controller[str(ref.get("uid"))].append(obj)
        self.objects = items
        self.by_namespace = dict(by_namespace)
        self.by_controller = dict(by_controller)
        self.orphans = dict(orphans)
        self.by_name: dict[tuple[str, str], Obj] | None = None  # on the first `find`


class Snapshot:
    """`keep_managers`: whose managedFields entries listed objects keep (the others' are
    dropped, and the field itself when no entry is left); None keeps them all."""

    def __init__(
        self,
        cluster: Cluster,
        page_size: int = 500,
        keep_managers: frozenset[str] | None = frozenset(),
    ) -> None:
        self._cluster = cluster
        self._page_size = page_size
        self._keep_managers = keep_managers
        self._lock = threading.Lock()
        self._locks: dict[ResourceInfo, threading.Lock] = {}
        # each type's objects and indexes in one entry: a parent's lookups hash the type once
        self._listings: dict[ResourceInfo, _Listing] = {}

    def _listing(self, resource: ResourceInfo) -> _Listing:
        """The type's listing, listed once per snapshot (the first caller lists, others of
        the same type wait for it)."""
        found = self._listings.get(resource)  # no lock once listed: entries are never replaced
        if found is not None:
            return found
        with self._lock:
            lock = self._locks.setdefault(resource, threading.Lock())
        with lock:
            found = self._listings.get(resource)
            if found is None:
                items = self._list(resource)
                if resource.kind == "Secret":
                    remember_secrets(items)  # so that no error text or log can quote them
                found = self._listings[resource] = _Listing(items)
            return found

    def objects(self, resource: ResourceInfo) -> list[Obj]:
        """Every object of the type (all namespaces); listed once per snapshot."""
        return self._listing(resource).objects

    def _list(self, resource: ResourceInfo) -> list[Obj]:
        items: list[Obj] = []
        table = SharingTable()
        with collector_paused():
            for page in iter_pages(self._cluster, resource, page_size=self._page_size):
                items += [slimmed(obj, self._keep_managers, table) for obj in page.items]
        return items

    def claim_candidates(
        self, resource: ResourceInfo, owner_uid: str, namespace: str | None
    ) -> list[Obj]:
        """What a parent may claim: the objects it controls, and the orphans of its namespace
        (all namespaces for a cluster-scoped parent). Others' objects never are."""
        listing = self._listing(resource)
        owned = listing.by_controller.get(owner_uid, [])
        if namespace is None or not resource.namespaced:
            return owned + [o for objs in listing.orphans.values() for o in objs]
        return owned + listing.orphans.get(namespace, [])

    def controlled_by(self, resource: ResourceInfo, owner_uid: str) -> list[Obj]:
        """The objects of the type whose controller is `owner_uid`."""
        return self._listing(resource).by_controller.get(owner_uid, [])

    def find(self, resource: ResourceInfo, namespace: str, name: str) -> Obj | None:
        return self._names(resource).get((namespace if resource.namespaced else "", name))

    def _names(self, resource: ResourceInfo) -> dict[tuple[str, str], Obj]:
        """The objects of the type by (namespace, name), indexed on the first `find` (a pass
        that finds every child where it expects it never needs it). Threads may race to
        build it: both build the same index."""
        listing = self._listing(resource)
        if listing.by_name is None:
            listing.by_name = {(namespace_of(o), name_of(o)): o for o in listing.objects}
        return listing.by_name

    def in_namespace(self, resource: ResourceInfo, namespace: str | None) -> list[Obj]:
        """Objects in one namespace; `None` means all (for a cluster-scoped parent)."""
        listing = self._listing(resource)
        if namespace is None or not resource.namespaced:
            return listing.objects
        return listing.by_namespace.get(namespace, [])

    @property
    def listed(self) -> list[ResourceInfo]:
        return list(self._listings)
