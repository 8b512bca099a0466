"""One pass's view of the cluster: each resource type listed once (paginated), on first use,
and indexed by namespace. Thread-safe: parents share it.

Objects are kept as planning and the hooks need them, but without the managedFields entries a
pass does not read (`objects.slim`): each page is slimmed as it arrives, so a pass holds the
kept objects and one page whole, never the whole list whole.

A controller's parents are listed first, and its other types once a page of parents holds one
it selects (`follow`): in the background, so that the server sends the one while the pass
reads the other, as any client listing two types would."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Sequence

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


#: Types to list in the background, and what says a page of the followed type calls for them.
_Follow = tuple[tuple[ResourceInfo, ...], Callable[[list[Obj]], bool]]


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


class _IndexedView:
    """What a pass reads of the cluster's objects, by type (`engine.flow.View`), from each
    type's listing and its indexes: `_listing` says where a type's listing comes from."""

    def _listing(self, resource: ResourceInfo) -> _Listing:
        raise NotImplementedError

    def objects(self, resource: ResourceInfo) -> list[Obj]:
        """Every object of the type (all namespaces)."""
        return self._listing(resource).objects

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


class Snapshot(_IndexedView):
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
        # types listed in the background once a page of a type calls for them (`follow`),
        # the threads listing them, and what one of them raised (for the type's first user)
        self._follows: dict[ResourceInfo, list[_Follow]] = {}
        self._background: list[threading.Thread] = []
        self._failed: dict[ResourceInfo, BaseException] = {}

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
                with self._lock:
                    failed = self._failed.pop(resource, None)
                if failed is not None:  # listed in the background, and failed there
                    raise failed
                items = self._list(resource)
                if resource.kind == "Secret":
                    remember_secrets(items)  # so that no error text or log can quote them
                found = self._listings[resource] = _Listing(items)
            return found

    def _list(self, resource: ResourceInfo) -> list[Obj]:
        items: list[Obj] = []
        table = SharingTable()
        with collector_paused():
            for page in iter_pages(self._cluster, resource, page_size=self._page_size):
                kept = [slimmed(obj, self._keep_managers, table) for obj in page.items]
                if kept and resource in self._follows:
                    self._start_followers(resource, kept)
                items += kept
        return items

    def follow(
        self,
        resource: ResourceInfo,
        followers: Sequence[ResourceInfo],
        wanted: Callable[[list[Obj]], bool],
    ) -> None:
        """List `followers` in the background as soon as `wanted` says of a page of
        `resource`'s objects (or of its listing already made) that it holds one the caller
        wants: a controller's other types, listed while its parents are once a parent is
        selected. A controller that selects none lists nothing more. What a background
        listing raises is raised to the type's first user until `settle`."""
        with self._lock:
            follows = self._follows.setdefault(resource, [])
            follows.append((tuple(f for f in followers if f != resource), wanted))
        listed = self._listings.get(resource)
        if listed is not None:
            self._start_followers(resource, listed.objects)

    def _start_followers(self, resource: ResourceInfo, objects: list[Obj]) -> None:
        with self._lock:
            follows = self._follows.get(resource, [])
        due = [followers for followers, wanted in follows if objects and wanted(objects)]
        if not due:
            return
        with self._lock:
            self._follows[resource] = [f for f in self._follows[resource] if f[0] not in due]
            started = {thread.name for thread in self._background}
            for follower in dict.fromkeys(f for followers in due for f in followers):
                name = f"list {follower.group_resource}/{follower.version}"
                if follower in self._listings or name in started:
                    continue
                thread = threading.Thread(
                    target=self._list_in_background, args=(follower,), name=name, daemon=True
                )
                self._background.append(thread)
                thread.start()

    def _list_in_background(self, resource: ResourceInfo) -> None:
        try:
            self._listing(resource)
        except BaseException as exc:  # raised to the type's first user (`_listing`)
            with self._lock:
                self._failed[resource] = exc

    def settle(self) -> None:
        """Wait for the background listings, and forget what they raised: at the end of a
        controller's pass, so that none is counted in the next pass and no failure of one is
        another controller's (it lists the type again)."""
        with self._lock:
            background, self._background = self._background, []
        for thread in background:
            thread.join()
        with self._lock:
            self._failed.clear()
            self._follows.clear()

    @property
    def listed(self) -> list[ResourceInfo]:
        return list(self._listings)


class PageView(_IndexedView):
    """One page of one type's objects as a snapshot shows them, every other type empty: what
    a kind's `select` reads to tell whether the page holds a parent it would sync, before
    the rest is listed (`Snapshot.follow`). Nothing is listed for it."""

    _NONE = _Listing([])

    def __init__(self, resource: ResourceInfo, page: list[Obj]) -> None:
        self._resource = resource
        self._page = _Listing(page)

    def _listing(self, resource: ResourceInfo) -> _Listing:
        return self._page if resource == self._resource else self._NONE
