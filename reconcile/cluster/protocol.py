"""The `Cluster` protocol every backend implements, and helpers written once over it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from reconcile.cluster.errors import BadRequest
from reconcile.cluster.stats import RequestStats
from reconcile.cluster.types import Obj, ObjectList, Propagation, ResourceInfo
from reconcile.objects.meta import identity, metadata


class Cluster(Protocol):
    """A Kubernetes API. All objects in and out are plain dicts carrying apiVersion and kind.

    Errors are `reconcile.cluster.errors.ApiError` subclasses. Every request sent is counted in
    `stats`. Implementations are safe to call from several threads.
    """

    stats: RequestStats

    def discover(self, api_version: str, resource: str) -> ResourceInfo:
        """Resolve a resource by plural, singular or kind (`deployments`, `Deployment`) within an
        apiVersion. Cached for the life of the backend; a miss refreshes once before NotFound."""
        ...

    def preferred_version(self, group: str) -> str:
        """The apiVersion the server prefers for an API group (`v1` for the core group, `apps/v1`);
        NotFound when the group is not served."""
        ...

    def server_release(self) -> str:
        """The server's Kubernetes release, `1.37` (its `/version`'s major.minor; `""` when it
        does not say), read once for the life of the backend."""
        ...

    def served_resources(self) -> list[ResourceInfo]:
        """Every resource the server serves, in its group's preferred version (subresources
        left out): for what must look at every kind, such as what a Namespace holds."""
        ...

    def list(
        self,
        resource: ResourceInfo,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> ObjectList:
        """One page of a LIST; `namespace=None` lists every namespace."""
        ...

    def get(self, resource: ResourceInfo, name: str, *, namespace: str | None = None) -> Obj: ...

    def create(self, resource: ResourceInfo, obj: Obj) -> Obj:
        """POST; the namespace comes from `obj.metadata.namespace`."""
        ...

    def update(self, resource: ResourceInfo, obj: Obj) -> Obj:
        """PUT; `metadata.resourceVersion`, when set, is the optimistic-concurrency precondition."""
        ...

    def update_status(self, resource: ResourceInfo, obj: Obj) -> Obj:
        """PUT to the `/status` subresource: only `status` changes."""
        ...

    def apply(
        self, resource: ResourceInfo, obj: Obj, *, field_manager: str, force: bool = False
    ) -> Obj:
        """Server-side apply (a PATCH of type `application/apply-patch+yaml`): creates the
        object or merges `obj` into it, owned by `field_manager`. A field another manager
        owns with a different value is a `FieldConflict`, unless `force` takes it over."""
        ...

    def delete(
        self,
        resource: ResourceInfo,
        name: str,
        *,
        namespace: str | None = None,
        uid: str | None = None,
        resource_version: str | None = None,
        propagation: Propagation | None = None,
    ) -> None:
        """DELETE with optional uid / resourceVersion preconditions (Conflict when they fail)."""
        ...

    def dry_run_view(self) -> Cluster:
        """The same cluster (same connection, same `stats`), whose writes (create, update,
        update_status, apply, delete) are sent as dry runs (`dryRun=All`): the server decodes,
        defaults, runs admission and validation and answers as it would, refusals included,
        but persists nothing (a create's answer has no resourceVersion; an update's keeps the
        stored one). Reads are unchanged."""
        ...


def list_all(
    cluster: Cluster,
    resource: ResourceInfo,
    *,
    namespace: str | None = None,
    label_selector: str | None = None,
    field_selector: str | None = None,
    page_size: int = 500,
) -> ObjectList:
    """Every item, following `continue` tokens; returns one list with the first page's
    resourceVersion (the snapshot the pages were read at)."""
    items: list[Obj] = []
    first_rv = ""
    for page in iter_pages(
        cluster,
        resource,
        namespace=namespace,
        label_selector=label_selector,
        field_selector=field_selector,
        page_size=page_size,
    ):
        first_rv = first_rv or page.resource_version
        items.extend(page.items)
    return ObjectList(items=items, resource_version=first_rv)


def iter_pages(
    cluster: Cluster,
    resource: ResourceInfo,
    *,
    namespace: str | None = None,
    label_selector: str | None = None,
    field_selector: str | None = None,
    page_size: int = 500,
) -> Iterator[ObjectList]:
    """Every page of a LIST: from the cluster's own `pages` when it has one (the live
    backend's asks for the next page while this one is read), else `list` page by page."""
    pages = getattr(cluster, "pages", None)
    if callable(pages):
        yield from pages(
            resource,
            namespace=namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            page_size=page_size,
        )
        return
    token: str | None = None
    while True:
        page = cluster.list(
            resource,
            namespace=namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            limit=page_size,
            continue_token=token,
        )
        yield page
        if not page.continue_token:
            return
        token = page.continue_token


def target_namespace(resource: ResourceInfo, obj: Obj) -> str | None:
    """The namespace a write of `obj` goes to; BadRequest for a namespaced object without one.

    Shared by both backends so they refuse the same requests with the same message.
    """
    if not resource.namespaced:
        return None
    namespace = metadata(obj).get("namespace")
    if not namespace:
        raise BadRequest(
            f"{identity(obj)}: metadata.namespace is required for the namespaced resource "
            f"{resource.group_resource}"
        )
    return str(namespace)


def with_type(resource: ResourceInfo, obj: Obj) -> Obj:
    """A shallow copy of `obj` with apiVersion and kind filled in from the resource."""
    out = dict(obj)
    out.setdefault("apiVersion", resource.api_version)
    out.setdefault("kind", resource.kind)
    return out
