"""`MemoryCluster`: the `Cluster` protocol served in-process, with kube-apiserver's semantics
wherever a client can see them (see the package docstring for what differs)."""

from __future__ import annotations

import copy
import functools
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

from reconcile.cluster.errors import (
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    NotFound,
)
from reconcile.cluster.memory.controllers.lifecycle import Lifecycle
from reconcile.cluster.memory.endpoints.fieldselectors import field_matcher
from reconcile.cluster.memory.endpoints.versions import Versions
from reconcile.cluster.memory.registry import fieldmanager
from reconcile.cluster.memory.registry.writes import WritePath, name_of_body
from reconcile.cluster.memory.resources import catalog, releases
from reconcile.cluster.memory.resources.discovery import ResourceRegistry
from reconcile.cluster.memory.storage.paging import ListPages
from reconcile.cluster.memory.storage.store import ObjectStore
from reconcile.cluster.memory.validation import fielderrors, objectmeta
from reconcile.cluster.protocol import target_namespace
from reconcile.cluster.stats import RequestStats
from reconcile.cluster.types import Obj, ObjectList, Propagation, ResourceInfo
from reconcile.objects.jsondata import normalized_copy
from reconcile.objects.meta import metadata
from reconcile.objects.selectors import SelectorError, parse_label_selector

_F = TypeVar("_F", bound=Callable[..., Any])

# The field manager of writes that name none: kube-apiserver takes it from the User-Agent,
# which is `reconcile` for the live client.
DEFAULT_FIELD_MANAGER = "reconcile"

KeyedObjects = list[tuple[str, Obj]]
Objects = list[Obj]


def utc_now() -> datetime:
    return datetime.now(UTC)


def format_time(moment: datetime) -> str:
    """RFC 3339 at second precision, as `metav1.Time` serialises: `2006-01-02T15:04:05Z`."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def clone_body(obj: Any) -> Obj:
    """The caller's object, copied so the backend never keeps a reference to it."""
    if not isinstance(obj, dict):
        raise BadRequest(f"the request body must be a JSON object, not {type(obj).__name__}")
    body: Obj = normalized_copy(obj)
    meta = body.get("metadata")
    if meta is None:
        body["metadata"] = {}
    elif not isinstance(meta, dict):
        raise BadRequest("metadata: must be an object")
    return body


def _counted(verb: str, success: str) -> Callable[[_F], _F]:
    """Counts how each request ended, by HTTP status, as the live backend does."""

    def wrap(method: _F) -> _F:
        @functools.wraps(method)
        def counted(self: MemoryCluster, *args: Any, **kwargs: Any) -> Any:
            try:
                result = method(self, *args, **kwargs)
            except ApiError as exc:
                self.stats.record_code(verb, str(exc.status))
                raise
            self.stats.record_code(verb, success)
            return result

        return cast(_F, counted)

    return wrap


class MemoryCluster:
    """An in-process Kubernetes API server with its garbage collector and namespace controller.

    Thread-safe; objects are copied on the way in and out. Requests are counted in `stats` like
    the live backend counts the requests it sends (discovery excluded).
    """

    def __init__(
        self,
        clock: Callable[[], datetime] | None = None,
        *,
        stable_uids: bool = False,
        kubernetes_version: str | None = None,
    ) -> None:
        """`kubernetes_version`: the release to behave as (`releases.DEFAULT_VERSION` when
        None; raises `UnsupportedVersion` for one not supported).

        `stable_uids`: derive each uid from the object's identity and how many times that
        identity was created in this store, instead of at random. Two runs over the same
        manifests then produce the same uids (and `controller-uid` labels), which keeps a
        written-out result stable and reloadable."""
        self.stats = RequestStats()
        self.field_manager = DEFAULT_FIELD_MANAGER
        self._dry_run = False  # a dry_run_view(): writes are checked and answered, not stored
        self._clock = clock or utc_now
        self._lock = threading.RLock()
        self.release = releases.release(kubernetes_version)
        self._registry = ResourceRegistry(
            self.release.resources, self.release.storage, minor=self.release.minor
        )
        self._store = ObjectStore()
        self._lifecycle = Lifecycle(self._store, self._registry, self._now)
        self._writes = WritePath(
            self.release,
            self._registry,
            self._store,
            self._lifecycle,
            self._now,
            stable_uids=stable_uids,
        )
        self._versions = Versions(self._registry, self._writes.admission, self.release.minor)
        self._pages = ListPages()
        namespaces = self._writes.storage_info(catalog.NAMESPACES)
        with self._lock:
            for name in catalog.BUILTIN_NAMESPACES:
                self._writes.create(namespaces, {"metadata": {"name": name}}, self._write())

    # --- the Cluster protocol ------------------------------------------------------------------

    def discover(self, api_version: str, resource: str) -> ResourceInfo:
        with self._lock:
            return self._registry.discover(api_version, resource)

    def preferred_version(self, group: str) -> str:
        with self._lock:
            return self._registry.preferred_version(group)

    def server_release(self) -> str:
        return self.release.version

    def served_resources(self) -> list[ResourceInfo]:
        with self._lock:
            return self._registry.served_resources()

    def api_resources(self) -> dict[str, list[ResourceInfo]]:
        """Discovery's documents: every group version served, with its resources."""
        with self._lock:
            return self._registry.api_resources()

    @_counted("list", "200")
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
        self.stats.record("list", resource.group_resource)
        try:
            labels = parse_label_selector(label_selector)
        except SelectorError as e:
            raise BadRequest(str(e)) from e
        fields = field_matcher(resource.group_resource, field_selector)
        with self._lock:
            info = self._registry.served(resource)
            stored = self._versions.target(info)
            scope = namespace if info.namespaced and namespace else None
            page = self._pages.page(
                self._store,
                stored.group_resource,
                (info.group_resource, scope, label_selector or "", field_selector or ""),
                lambda obj: labels.matches(obj) and (fields is None or fields(obj)),
                limit=limit,
                continue_token=continue_token,
            )
            selected = not labels.empty or fields is not None
            return ObjectList(
                items=[self._out(info, obj) for obj in page.objects],
                resource_version=str(page.resource_version),
                continue_token=page.continue_token,
                remaining_item_count=page.left if page.left and not selected else None,
            )

    @_counted("get", "200")
    def get(self, resource: ResourceInfo, name: str, *, namespace: str | None = None) -> Obj:
        self.stats.record("get", resource.group_resource)
        with self._lock:
            info = self._registry.served(resource)
            with self._versions.speaking_as(info):
                found = self._writes.existing(self._versions.target(info), name, namespace)
            return self._out(info, found)

    @_counted("create", "201")
    def create(self, resource: ResourceInfo, obj: Obj) -> Obj:
        self.stats.record("create", resource.group_resource)
        return self._write_whole(resource, obj, self._writes.create)

    @_counted("update", "200")
    def update(self, resource: ResourceInfo, obj: Obj) -> Obj:
        self.stats.record("update", resource.group_resource)
        return self._write_whole(resource, obj, self._writes.update)

    def _write_whole(self, resource: ResourceInfo, obj: Obj, store: Callable[..., Obj]) -> Obj:
        """A create or an update: the body in the served version, stored in the storage one."""
        body = clone_body(obj)
        with self._lock:
            info = self._registry.served(resource)
            write = self._write(api_version=info.api_version)
            with self._versions.speaking_as(info):
                body = self._versions.incoming(info, body)
                stored = store(self._versions.target(info), body, write, dry_run=self._dry_run)
            self._lifecycle.settle()
            return self._out(info, stored)

    @_counted("patch", "200")
    def apply(
        self, resource: ResourceInfo, obj: Obj, *, field_manager: str, force: bool = False
    ) -> Obj:
        self.stats.record("patch", resource.group_resource)
        body = clone_body(obj)
        with self._lock:
            info = self._registry.served(resource)
            objectmeta.check_type(info, body)
            write = self._write(field_manager, api_version=info.api_version)
            with self._versions.speaking_as(info):
                body = self._versions.incoming(info, body, decode=False)
                result = self._apply(self._versions.target(info), body, write, force=force)
            self._lifecycle.settle()
            return self._out(info, result)

    def _apply(
        self, info: ResourceInfo, body: Obj, write: fieldmanager.Write, *, force: bool
    ) -> Obj:
        namespace = target_namespace(info, body) or ""
        if info.namespaced:
            body["metadata"]["namespace"] = namespace
        name = name_of_body(body)
        if not name:
            fielderrors.raise_invalid(
                info,
                "",
                [fielderrors.required("metadata.name", "name is required")],
                minor=self.release.minor,
            )
        if info.namespaced:
            self._writes.check_namespace(info, namespace, name)
        stored = self._store.get(info.group_resource, namespace if info.namespaced else "", name)
        applied = fieldmanager.server_apply(
            stored, body, self._writes.ownership_kind(info), write, force=force
        )
        managed = applied["metadata"]["managedFields"]
        dry = self._dry_run
        if stored is None:
            return self._writes.create(info, applied, write, managed=managed, dry_run=dry)
        return self._writes.update(info, applied, write, managed=managed, dry_run=dry)

    @_counted("update", "200")
    def update_status(self, resource: ResourceInfo, obj: Obj) -> Obj:
        self.stats.record("update", f"{resource.group_resource}/status")
        body = clone_body(obj)
        with self._lock:
            info = self._registry.served(resource)
            if not info.has_status:
                raise NotFound("the server could not find the requested resource")
            objectmeta.check_type(info, body)
            write = self._write(subresource="status", api_version=info.api_version)
            with self._versions.speaking_as(info):
                body = self._versions.incoming(info, body)
                target = self._versions.target(info)
                stored = self._writes.existing(
                    target, name_of_body(body), target_namespace(info, body)
                )
                self._writes.check_preconditions(target, stored, body["metadata"])
                new = self._writes.status_update(target, stored, body)
            self._writes.track(target, stored, new, write)
            if new == stored:
                return self._out(info, stored)
            if self._dry_run:
                return self._out(info, new)
            self._lifecycle.write(target.group_resource, new)
            self._lifecycle.settle()
            return self._out(info, new)

    @_counted("delete", "200")
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
        self.stats.record("delete", resource.group_resource)
        try:
            policy = Propagation(propagation) if propagation is not None else None
        except ValueError as e:
            raise BadRequest(
                f'propagationPolicy: Unsupported value: "{propagation}": supported values: '
                '"Foreground", "Background", "Orphan"'
            ) from e
        with self._lock:
            info = self._registry.served(resource)
            target = self._versions.target(info)
            with self._versions.speaking_as(info):
                stored = self._writes.existing(target, name, namespace)
            meta = metadata(stored)
            if self._dry_run:
                # kube-apiserver checks a dry run's preconditions in its storage layer, which
                # words the refusal its own way
                _dry_run_preconditions(info, name, meta, uid, resource_version)
            if uid and uid != meta.get("uid"):
                raise self._writes.conflict(
                    info,
                    name,
                    f"Precondition failed: UID in precondition: {uid}, "
                    f"UID in object meta: {meta.get('uid')}",
                )
            if resource_version and resource_version != meta.get("resourceVersion"):
                raise self._writes.conflict(
                    info,
                    name,
                    f"Precondition failed: ResourceVersion in precondition: {resource_version}, "
                    f"ResourceVersion in object meta: {meta.get('resourceVersion')}",
                )
            if info.group_resource == catalog.NAMESPACES and name in catalog.UNDELETABLE_NAMESPACES:
                raise Forbidden(
                    f'namespaces "{name}" is forbidden: this namespace may not be deleted',
                    details={"name": name, "kind": "namespaces"},
                )
            if self._dry_run:
                return
            self._lifecycle.delete(target.group_resource, stored, policy)
            self._lifecycle.settle()

    def dry_run_view(self) -> MemoryCluster:
        """This cluster (same objects, lock and stats) answering writes as kube-apiserver
        answers `dryRun=All`: decoded, defaulted, admitted and validated, returned as they
        would be stored (a create with its uid and creationTimestamp but no resourceVersion,
        an update with its generation moved on and the stored resourceVersion), and nothing
        stored: no resourceVersion, generation, uid count or garbage collection moves."""
        view = copy.copy(self)
        view._dry_run = True
        return view

    # --- beyond the protocol -------------------------------------------------------------------

    def with_own_stats(self, field_manager: str | None = None) -> MemoryCluster:
        """Another client of the same cluster (same objects, same lock), counting its requests
        in a `stats` of its own: tests tell the code under test's requests from set-up ones.
        `field_manager`: the manager its writes are owned by (as another User-Agent)."""
        view = copy.copy(self)
        view.stats = RequestStats()
        if field_manager is not None:
            view.field_manager = field_manager
        return view

    def all_objects(self) -> Objects:
        """A copy of every stored object (by resource, then namespace and name), each with the
        apiVersion it is stored as."""
        return [obj for _, obj in self.objects_by_resource()]

    def objects_by_resource(self) -> KeyedObjects:
        """`all_objects()` with each object's group_resource (`deployments.apps`)."""
        with self._lock:
            out: KeyedObjects = []
            for group_resource, obj in self._store.all():
                info = self._registry.storage(group_resource)
                if info is not None:
                    out.append((group_resource, self._out(info, obj)))
            return out

    @property
    def resource_version(self) -> str:
        """The current (latest) resourceVersion."""
        with self._lock:
            return str(self._store.resource_version)

    # --- writes --------------------------------------------------------------------------------

    # --- field ownership -----------------------------------------------------------------------

    def _write(
        self, manager: str | None = None, subresource: str = "", api_version: str = ""
    ) -> fieldmanager.Write:
        """Who writes now (`api_version`: when empty, the written object's)."""
        return fieldmanager.Write(
            manager or self.field_manager, api_version, self._now(), subresource
        )

    # --- helpers -------------------------------------------------------------------------------

    def _now(self) -> str:
        return format_time(self._clock())

    def _out(self, info: ResourceInfo, obj: Obj) -> Obj:
        """A copy for the caller, as the version it asked through shows it."""
        obj = self._versions.outgoing(info, obj)
        out: Obj = {"apiVersion": info.api_version, "kind": info.kind}
        for key, value in obj.items():
            if key not in out:
                out[key] = normalized_copy(value)
        return out


def _dry_run_preconditions(
    info: ResourceInfo,
    name: str,
    meta: dict[str, Any],
    uid: str | None,
    resource_version: str | None,
) -> None:
    """A dry-run delete's preconditions, refused in the words of kube-apiserver's storage."""
    details = {"name": name, "group": info.group, "kind": info.resource}
    where = f'Operation cannot be fulfilled on {info.kind} "{name}"'
    if uid and uid != meta.get("uid"):
        raise Conflict(
            f"{where}: the UID in the precondition ({uid}) does not match the UID in record "
            f"({meta.get('uid')}). The object might have been deleted and then recreated",
            details=details,
        )
    if resource_version and resource_version != meta.get("resourceVersion"):
        raise Conflict(
            f"{where}: the ResourceVersion in the precondition ({resource_version}) does not "
            f"match the ResourceVersion in record ({meta.get('resourceVersion')}). The object "
            "might have been modified",
            details=details,
        )
