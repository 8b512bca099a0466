"""`MemoryCluster`: the `Cluster` protocol served in-process, with kube-apiserver's semantics
wherever a client can see them (see the package docstring for what differs)."""

from __future__ import annotations

import builtins
import copy
import functools
import threading
import uuid
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar, cast

from reconcile.cluster.errors import (
    AlreadyExists,
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    MethodNotAllowed,
    NotFound,
)
from reconcile.cluster.memory import builtin, crd, kinds, ownership, releases
from reconcile.cluster.memory import validation as v
from reconcile.cluster.memory.admission import BuiltinAdmission
from reconcile.cluster.memory.fields import field_matcher
from reconcile.cluster.memory.lifecycle import Lifecycle, finalizers_of
from reconcile.cluster.memory.paging import decode_continue, encode_continue
from reconcile.cluster.memory.registry import ResourceRegistry
from reconcile.cluster.memory.schema import apply_schema
from reconcile.cluster.memory.store import ObjectStore
from reconcile.cluster.memory.util import (
    clone,
    clone_body,
    format_time,
    generate_name,
    utc_now,
)
from reconcile.cluster.protocol import target_namespace
from reconcile.cluster.stats import RequestStats
from reconcile.cluster.types import Obj, ObjectList, Propagation, ResourceInfo
from reconcile.objects.meta import SERVER_OWNED_METADATA, identity, is_deleting, metadata
from reconcile.objects.secrets import fold_string_data, undecodable_data
from reconcile.objects.selectors import SelectorError, parse_label_selector

_F = TypeVar("_F", bound=Callable[..., Any])

# metadata fields only the server sets; a client's values are ignored
SERVER_FIELDS = tuple(sorted(SERVER_OWNED_METADATA))
_OBJECT_META = {"$ref": "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
# The field manager of writes that name none: kube-apiserver takes it from the User-Agent,
# which is `reconcile` for the live client.
DEFAULT_FIELD_MANAGER = "reconcile"
_SNAPSHOTS_KEPT = 32
_GENERATE_NAME_ATTEMPTS = 8

SnapshotKey = tuple[str, str | None, str, str, int]
KeyedObjects = list[tuple[str, Obj]]
Objects = list[Obj]


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
        self._stable_uids = stable_uids
        self._creations: dict[str, int] = {}
        self._clock = clock or utc_now
        self._lock = threading.RLock()
        self.release = releases.release(kubernetes_version)
        self._admission = BuiltinAdmission(self.release)
        self._registry = ResourceRegistry(self.release.resources)
        self._store = ObjectStore()
        self._lifecycle = Lifecycle(self._store, self._registry, self._now)
        self._snapshots: OrderedDict[SnapshotKey, KeyedObjects] = OrderedDict()
        namespaces = self._storage_info(builtin.NAMESPACES)
        with self._lock:
            for name in builtin.BUILTIN_NAMESPACES:
                self._create(namespaces, {"metadata": {"name": name}})

    def _new_uid(self, group_resource: str, namespace: str, name: str) -> str:
        if not self._stable_uids:
            return str(uuid.uuid4())
        key = f"{group_resource}/{namespace}/{name}"
        self._creations[key] = self._creations.get(key, 0) + 1
        return str(uuid.uuid5(_UID_NAMESPACE, f"{key}#{self._creations[key]}"))

    # --- the Cluster protocol ------------------------------------------------------------------

    def discover(self, api_version: str, resource: str) -> ResourceInfo:
        with self._lock:
            return self._registry.discover(api_version, resource)

    def preferred_version(self, group: str) -> str:
        with self._lock:
            return self._registry.preferred_version(group)

    def served_resources(self) -> list[ResourceInfo]:
        with self._lock:
            return self._registry.served_resources()

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
            scope = namespace if info.namespaced and namespace else None
            if continue_token:
                list_rv, start = decode_continue(continue_token)
            else:
                list_rv, start = self._store.resource_version, ""
            key: SnapshotKey = (
                info.group_resource,
                scope,
                label_selector or "",
                field_selector or "",
                list_rv,
            )
            matching = self._snapshots.get(key) if continue_token else None
            if matching is None:
                matching = [
                    (k, obj)
                    for k, obj in self._store.items(info.group_resource, scope)
                    if labels.matches(obj) and (fields is None or fields(obj))
                ]
            remaining = matching[bisect_left(matching, start, key=lambda item: item[0]) :]
            page = remaining[:limit] if limit is not None and limit > 0 else remaining
            left = len(remaining) - len(page)
            token = ""
            if left:
                token = encode_continue(list_rv, page[-1][0])
                self._snapshots[key] = matching
                self._snapshots.move_to_end(key)
                while len(self._snapshots) > _SNAPSHOTS_KEPT:
                    self._snapshots.popitem(last=False)
            selected = not labels.empty or fields is not None
            return ObjectList(
                items=[self._out(info, obj) for _, obj in page],
                resource_version=str(list_rv),
                continue_token=token,
                remaining_item_count=left if left and not selected else None,
            )

    @_counted("get", "200")
    def get(self, resource: ResourceInfo, name: str, *, namespace: str | None = None) -> Obj:
        self.stats.record("get", resource.group_resource)
        with self._lock:
            info = self._registry.served(resource)
            return self._out(info, self._existing(info, name, namespace))

    @_counted("create", "201")
    def create(self, resource: ResourceInfo, obj: Obj) -> Obj:
        self.stats.record("create", resource.group_resource)
        body = clone_body(obj)
        with self._lock:
            info = self._registry.served(resource)
            created = self._create(info, body, self._write())
            self._lifecycle.settle()
            return self._out(info, created)

    @_counted("update", "200")
    def update(self, resource: ResourceInfo, obj: Obj) -> Obj:
        self.stats.record("update", resource.group_resource)
        body = clone_body(obj)
        with self._lock:
            info = self._registry.served(resource)
            updated = self._update(info, body, self._write())
            self._lifecycle.settle()
            return self._out(info, updated)

    @_counted("patch", "200")
    def apply(
        self, resource: ResourceInfo, obj: Obj, *, field_manager: str, force: bool = False
    ) -> Obj:
        self.stats.record("patch", resource.group_resource)
        body = clone_body(obj)
        with self._lock:
            info = self._registry.served(resource)
            v.check_type(info, body)
            namespace = target_namespace(info, body) or ""
            if info.namespaced:
                body["metadata"]["namespace"] = namespace
            name = _name_of_body(body)
            if not name:
                v.raise_invalid(info, "", [v.required("metadata.name", "name is required")])
            if info.namespaced:
                self._check_namespace(info, namespace, name)
            stored = self._store.get(
                info.group_resource, namespace if info.namespaced else "", name
            )
            write = self._write(field_manager, api_version=info.api_version)
            applied = ownership.server_apply(
                stored, body, self._ownership_kind(info), write, force=force
            )
            managed = applied["metadata"]["managedFields"]
            if stored is None:
                result = self._create(info, applied, write, managed=managed)
            else:
                result = self._update(info, applied, write, managed=managed)
            self._lifecycle.settle()
            return self._out(info, result)

    @_counted("update", "200")
    def update_status(self, resource: ResourceInfo, obj: Obj) -> Obj:
        self.stats.record("update", f"{resource.group_resource}/status")
        body = clone_body(obj)
        with self._lock:
            info = self._registry.served(resource)
            if not info.has_status:
                raise NotFound("the server could not find the requested resource")
            v.check_type(info, body)
            stored = self._existing(info, _name_of_body(body), target_namespace(info, body))
            self._check_preconditions(info, stored, body["metadata"])
            new: Obj = clone(stored)
            if "status" in body:
                new["status"] = body["status"]
            else:
                new.pop("status", None)
            if self._registry.is_custom(info.group_resource):
                errors = apply_schema(self._schema(info), new)
                v.raise_invalid(info, _name_of_body(body), errors)
            self._track(info, stored, new, self._write(subresource="status"))
            if new == stored:
                return self._out(info, stored)
            self._lifecycle.write(info.group_resource, new)
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
            stored = self._existing(info, name, namespace)
            meta = metadata(stored)
            if uid and uid != meta.get("uid"):
                raise self._conflict(
                    info,
                    name,
                    f"Precondition failed: UID in precondition: {uid}, "
                    f"UID in object meta: {meta.get('uid')}",
                )
            if resource_version and resource_version != meta.get("resourceVersion"):
                raise self._conflict(
                    info,
                    name,
                    f"Precondition failed: ResourceVersion in precondition: {resource_version}, "
                    f"ResourceVersion in object meta: {meta.get('resourceVersion')}",
                )
            if info.group_resource == builtin.NAMESPACES and name in builtin.UNDELETABLE_NAMESPACES:
                raise Forbidden(
                    f'namespaces "{name}" is forbidden: this namespace may not be deleted',
                    details={"name": name, "kind": "namespaces"},
                )
            self._lifecycle.delete(info.group_resource, stored, policy)
            self._lifecycle.settle()

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

    def _create(
        self,
        info: ResourceInfo,
        body: Obj,
        write: ownership.Write | None = None,
        *,
        managed: builtins.list[dict[str, Any]] | None = None,
    ) -> Obj:
        """`write`: who creates it, for managedFields; `managed`: managedFields already
        decided (a server-side apply)."""
        group_resource = info.group_resource
        storage = self._storage_info(group_resource)
        v.check_type(info, body)
        meta: dict[str, Any] = body["metadata"]
        namespace = target_namespace(info, body) or ""
        if info.namespaced:
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        if meta.get("resourceVersion"):
            raise BadRequest("resourceVersion should not be set on objects to be created")
        name = str(meta.get("name") or "")
        if info.namespaced:
            self._check_namespace(info, namespace, name)
        if self._registry.is_custom(group_resource):
            definition = self._store.get(builtin.CRDS, "", group_resource)
            if definition is not None and is_deleting(definition):
                raise MethodNotAllowed(
                    "create not allowed while custom resource definition is terminating",
                    details={"group": info.group, "kind": info.resource},
                )
        generated = bool(not name and meta.get("generateName"))
        if generated:
            name = self._generated_name(group_resource, namespace, str(meta["generateName"]))
        if not name:
            v.raise_invalid(
                info, "", [v.required("metadata.name", "name or generateName is required")]
            )
        meta["name"] = name
        for field in SERVER_FIELDS:
            meta.pop(field, None)
        now = self._now()
        if group_resource == builtin.CRDS:
            crd.apply_defaults(body)
            crd.validate(info, body)
            v.raise_invalid(info, name, v.metadata_errors(meta))
        else:
            v.raise_invalid(info, name, v.name_errors(info, name) + v.metadata_errors(meta))
            if self._is_builtin(group_resource):
                services = (obj for _, obj in self._store.items("services"))
                self._admission.create(info, body, name, services)
        if self._store.get(group_resource, namespace, name) is not None:
            raise AlreadyExists(
                f'{group_resource} "{name}" already exists',
                details={"name": name, "group": info.group, "kind": info.resource},
            )
        if info.has_status:
            if group_resource == builtin.CRDS:
                body["status"] = crd.initial_status(body, now)
            elif self._registry.is_custom(group_resource):
                body.pop("status", None)
            else:
                body["status"] = self._admission.initial_status(info, body)
        if self._registry.is_custom(group_resource):
            v.raise_invalid(info, name, apply_schema(self._schema(info), body))
        body["apiVersion"] = storage.api_version
        body = fold_string_data(body)  # as the API server stores Secrets
        if (problem := undecodable_data(body)) is not None:
            raise BadRequest(problem)
        meta = body["metadata"]
        meta["uid"] = self._new_uid(group_resource, str(meta.get("namespace") or ""), name)
        meta["creationTimestamp"] = now
        if self._is_builtin(group_resource):
            self._admission.created(info, body)
        if self._tracks_generation(info):
            meta["generation"] = 1
        self._track(info, None, body, write or self._write(), managed=managed)
        meta["resourceVersion"] = self._store.next_resource_version()
        self._store.put(group_resource, body)
        if group_resource == builtin.CRDS:
            self._registry.register_custom(*crd.resources(body))
        self._lifecycle.after_write(group_resource, None, body)
        return body

    def _update(
        self,
        info: ResourceInfo,
        body: Obj,
        write: ownership.Write | None = None,
        *,
        managed: builtins.list[dict[str, Any]] | None = None,
    ) -> Obj:
        group_resource = info.group_resource
        v.check_type(info, body)
        meta: dict[str, Any] = body["metadata"]
        requested = meta.get("managedFields")
        namespace = target_namespace(info, body) or ""
        stored = self._existing(info, _name_of_body(body), namespace)
        self._check_preconditions(info, stored, meta)
        stored_meta = metadata(stored)
        for field in (*SERVER_FIELDS, "name", "namespace"):
            if field in stored_meta:
                meta[field] = clone(stored_meta[field])
            else:
                meta.pop(field, None)
        if info.has_status:
            if "status" in stored:
                body["status"] = clone(stored["status"])
            else:
                body.pop("status", None)
        errors = v.metadata_errors(meta)
        if self._is_builtin(group_resource):
            v.raise_invalid(info, str(meta["name"]), errors)
            self._admission.update(info, stored, body, str(meta["name"]))
        if self._registry.is_custom(group_resource):
            errors += apply_schema(self._schema(info), body)
        if is_deleting(stored):
            errors += v.no_new_finalizers(finalizers_of(stored), finalizers_of(body))
        v.raise_invalid(info, str(meta["name"]), errors)
        if group_resource == builtin.CRDS:
            crd.apply_defaults(body)
            crd.validate(info, body, stored)
            body["status"] = crd.initial_status(body, self._now(), stored.get("status"))
        body["apiVersion"] = self._storage_info(group_resource).api_version
        body = fold_string_data(body)  # as the API server stores Secrets
        if (problem := undecodable_data(body)) is not None:
            raise BadRequest(problem)
        meta = body["metadata"]
        if self._tracks_generation(info) and self._spec_changed(info, stored, body):
            meta["generation"] = int(stored_meta.get("generation") or 0) + 1
        self._track(info, stored, body, write or self._write(), requested, managed=managed)
        if body == stored:
            return stored
        self._lifecycle.write(group_resource, body)
        if group_resource == builtin.CRDS:
            self._registry.register_custom(*crd.resources(body))
        return body

    def _spec_changed(self, info: ResourceInfo, old: Obj, new: Obj) -> bool:
        """Whether a change bumps metadata.generation: anything outside metadata (and status,
        when status is a subresource) changed; deployments also count their annotations."""
        ignored = {"metadata", "apiVersion", "kind"}
        if info.has_status:
            ignored.add("status")
        if {k: val for k, val in old.items() if k not in ignored} != {
            k: val for k, val in new.items() if k not in ignored
        }:
            return True
        if kinds.rules_for(info.group_resource).annotations_are_spec:
            return metadata(old).get("annotations") != metadata(new).get("annotations")
        return False

    def _is_builtin(self, group_resource: str) -> bool:
        return group_resource != builtin.CRDS and not self._registry.is_custom(group_resource)

    def _tracks_generation(self, info: ResourceInfo) -> bool:
        group_resource = info.group_resource
        return (
            self._registry.is_custom(group_resource)
            or group_resource in builtin.GENERATION_RESOURCES
            or (
                info.group in builtin.GENERATION_GROUPS
                and group_resource not in builtin.NO_GENERATION_RESOURCES
            )
        )

    # --- field ownership -----------------------------------------------------------------------

    def _write(
        self, manager: str | None = None, subresource: str = "", api_version: str = ""
    ) -> ownership.Write:
        """Who writes now (`api_version`: when empty, the written object's)."""
        return ownership.Write(manager or self.field_manager, api_version, self._now(), subresource)

    def _ownership_kind(self, info: ResourceInfo) -> ownership.Kind:
        schemas = self.release.schemas
        if self._registry.is_custom(info.group_resource):
            root = self._schema(info)
        else:
            storage = self._storage_info(info.group_resource)
            root = schemas.root(storage.api_version, storage.kind)
        return ownership.Kind(
            ownership.Shape(root, schemas.resolve),
            ownership.Shape(_OBJECT_META, schemas.resolve),
            info.has_status,
        )

    def _track(
        self,
        info: ResourceInfo,
        old: Obj | None,
        new: Obj,
        write: ownership.Write,
        requested: Any = None,
        *,
        managed: builtins.list[dict[str, Any]] | None = None,
    ) -> None:
        """Set `new`'s managedFields after a write of `old` (None: a create) by `write`;
        `managed`: already decided (a server-side apply)."""
        if managed is None:
            api_version = write.api_version or str(new.get("apiVersion") or info.api_version)
            write = replace(write, api_version=api_version)
            kind = self._ownership_kind(info)
            managed = ownership.after_update(old, new, kind, write, requested)
        meta = new.setdefault("metadata", {})
        if managed:
            meta["managedFields"] = managed
        else:
            meta.pop("managedFields", None)

    # --- helpers -------------------------------------------------------------------------------

    def _now(self) -> str:
        return format_time(self._clock())

    def _schema(self, info: ResourceInfo) -> dict[str, Any] | None:
        """The OpenAPI schema of a custom resource's version."""
        definition = self._store.get(builtin.CRDS, "", info.group_resource)
        return crd.schema_of(definition, info.version) if definition is not None else None

    def _storage_info(self, group_resource: str) -> ResourceInfo:
        info = self._registry.storage(group_resource)
        if info is None:  # pragma: no cover - callers pass served resources
            raise NotFound(f"the server could not find the resource {group_resource}")
        return info

    def _out(self, info: ResourceInfo, obj: Obj) -> Obj:
        """A copy for the caller, typed as the version it asked through."""
        out: Obj = {"apiVersion": info.api_version, "kind": info.kind}
        for key, value in obj.items():
            if key not in out:
                out[key] = clone(value)
        return out

    def _existing(self, info: ResourceInfo, name: str, namespace: str | None) -> Obj:
        if info.namespaced and not namespace:
            raise BadRequest(
                f"a namespace is required for the namespaced resource {info.group_resource}"
            )
        scope = (namespace or "") if info.namespaced else ""
        found = self._store.get(info.group_resource, scope, name)
        if found is None:
            raise NotFound(
                f'{info.group_resource} "{name}" not found',
                details={"name": name, "group": info.group, "kind": info.resource},
            )
        return found

    def _check_namespace(self, info: ResourceInfo, namespace: str, name: str) -> None:
        ns = self._store.get(builtin.NAMESPACES, "", namespace)
        if ns is None:
            raise NotFound(
                f'namespaces "{namespace}" not found',
                details={"name": namespace, "kind": "namespaces"},
            )
        if is_deleting(ns):
            message = (
                f"unable to create new content in namespace {namespace} because it is being "
                "terminated"
            )
            raise Forbidden(
                f'{info.group_resource} "{name}" is forbidden: {message}',
                details={
                    "name": name,
                    "group": info.group,
                    "kind": info.resource,
                    "causes": [
                        {
                            "reason": "NamespaceTerminating",
                            "message": message,
                            "field": "metadata.namespace",
                        }
                    ],
                },
            )

    def _check_preconditions(self, info: ResourceInfo, stored: Obj, meta: dict[str, Any]) -> None:
        stored_meta = metadata(stored)
        name = str(stored_meta.get("name"))
        uid = meta.get("uid")
        if uid and uid != stored_meta.get("uid"):
            raise self._conflict(
                info,
                name,
                f"Precondition failed: UID in precondition: {uid}, "
                f"UID in object meta: {stored_meta.get('uid')}",
            )
        rv = meta.get("resourceVersion")
        if rv and str(rv) != stored_meta.get("resourceVersion"):
            raise self._conflict(
                info,
                name,
                "the object has been modified; please apply your changes to the latest version "
                "and try again",
            )

    @staticmethod
    def _conflict(info: ResourceInfo, name: str, why: str) -> Conflict:
        return Conflict(
            f'Operation cannot be fulfilled on {info.group_resource} "{name}": {why}',
            details={"name": name, "group": info.group, "kind": info.resource},
        )

    def _generated_name(self, group_resource: str, namespace: str, prefix: str) -> str:
        name = generate_name(prefix)
        for _ in range(_GENERATE_NAME_ATTEMPTS):
            if self._store.get(group_resource, namespace, name) is None:
                break
            name = generate_name(prefix)
        return name


def _name_of_body(body: Obj) -> str:
    name = metadata(body).get("name")
    if not name:
        raise BadRequest(f"{identity(body)}: metadata.name is required")
    return str(name)


_UID_NAMESPACE = uuid.UUID("6f0c4a52-7d43-4c1e-9a55-2f1f3d0b8e61")
