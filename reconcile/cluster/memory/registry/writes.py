"""The write path of the in-process API server (kube-apiserver's generic registry store): a
create or update through type and name checks, the kind's admission (`strategies`) or a CRD's
schema, the initial status, metadata.generation, managedFields, and storage. Callers hold the
server's lock."""

from __future__ import annotations

import builtins
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from reconcile.cluster.errors import (
    AlreadyExists,
    BadRequest,
    Conflict,
    Forbidden,
    MethodNotAllowed,
    NotFound,
)
from reconcile.cluster.memory.controllers.lifecycle import Lifecycle, finalizers_of
from reconcile.cluster.memory.registry import fieldmanager
from reconcile.cluster.memory.resources import catalog
from reconcile.cluster.memory.resources.discovery import ResourceRegistry
from reconcile.cluster.memory.resources.releases import Release
from reconcile.cluster.memory.storage.names import generate_name
from reconcile.cluster.memory.storage.store import ObjectStore
from reconcile.cluster.memory.strategies import crd, kinds
from reconcile.cluster.memory.strategies.admission import BuiltinAdmission
from reconcile.cluster.memory.strategies.custom_resource import apply_schema
from reconcile.cluster.memory.validation import fielderrors, objectmeta
from reconcile.cluster.protocol import target_namespace
from reconcile.cluster.types import Obj, ResourceInfo
from reconcile.objects.jsondata import normalized_copy
from reconcile.objects.meta import SERVER_OWNED_METADATA, identity, is_deleting, metadata
from reconcile.objects.secrets import fold_string_data, undecodable_data

# metadata fields only the server sets; a client's values are ignored
SERVER_FIELDS = tuple(sorted(SERVER_OWNED_METADATA))
_OBJECT_META = {"$ref": "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
_GENERATE_NAME_ATTEMPTS = 8

_UID_NAMESPACE = uuid.UUID("6f0c4a52-7d43-4c1e-9a55-2f1f3d0b8e61")


class WritePath:
    def __init__(
        self,
        release: Release,
        registry: ResourceRegistry,
        store: ObjectStore,
        lifecycle: Lifecycle,
        now: Callable[[], str],
        *,
        stable_uids: bool = False,
    ) -> None:
        """`stable_uids`: derive each uid from the object's identity and how many times that
        identity was created in this store, instead of at random."""
        self.release = release
        self.admission = BuiltinAdmission(release)
        self.registry, self.store, self.lifecycle, self.now = registry, store, lifecycle, now
        self.stable_uids = stable_uids
        self.creations: dict[str, int] = {}

    def new_uid(
        self, group_resource: str, namespace: str, name: str, *, dry_run: bool = False
    ) -> str:
        """`dry_run`: the uid the object would get, with nothing counted."""
        if not self.stable_uids:
            return str(uuid.uuid4())
        key = f"{group_resource}/{namespace}/{name}"
        count = self.creations.get(key, 0) + 1
        if not dry_run:
            self.creations[key] = count
        return str(uuid.uuid5(_UID_NAMESPACE, f"{key}#{count}"))

    def create(
        self,
        info: ResourceInfo,
        body: Obj,
        write: fieldmanager.Write,
        *,
        managed: builtins.list[dict[str, Any]] | None = None,
        dry_run: bool = False,
    ) -> Obj:
        """`write`: who creates it, for managedFields; `managed`: managedFields already
        decided (a server-side apply); `dry_run`: the object as it would be stored, without a
        resourceVersion, and nothing stored (kube-apiserver's dry-run create)."""
        group_resource = info.group_resource
        storage = self.storage_info(group_resource)
        namespace, name = self._placed(info, body)
        meta: dict[str, Any] = body["metadata"]
        for field in SERVER_FIELDS:
            meta.pop(field, None)
        now = self.now()
        if group_resource == catalog.CRDS:
            crd.apply_defaults(body)
            crd.validate(info, body, minor=self.release.minor)
            fielderrors.raise_invalid(
                info,
                name,
                objectmeta.metadata_errors(meta, self.release.minor),
                minor=self.release.minor,
            )
        else:
            fielderrors.raise_invalid(
                info,
                name,
                objectmeta.name_errors(info, name)
                + objectmeta.metadata_errors(meta, self.release.minor),
                minor=self.release.minor,
            )
            if self._is_builtin(group_resource):
                services = (obj for _, obj in self.store.items("services"))
                self.admission.create(info, body, name, services)
        if self.store.get(group_resource, namespace, name) is not None:
            raise AlreadyExists(
                f'{group_resource} "{name}" already exists',
                details={"name": name, "group": info.group, "kind": info.resource},
            )
        if info.has_status:
            if group_resource == catalog.CRDS:
                body["status"] = crd.initial_status(body, now)
            elif self.registry.is_custom(group_resource):
                body.pop("status", None)
            else:
                body["status"] = self.admission.initial_status(info, body)
        if self.registry.is_custom(group_resource):
            fielderrors.raise_invalid(
                info, name, self.schema_errors(info, body), minor=self.release.minor
            )
        body["apiVersion"] = storage.api_version
        body = fold_string_data(body)  # as the API server stores Secrets
        if (problem := undecodable_data(body)) is not None:
            raise BadRequest(problem)
        meta = body["metadata"]
        namespace_name = str(meta.get("namespace") or "")
        meta["uid"] = self.new_uid(group_resource, namespace_name, name, dry_run=dry_run)
        meta["creationTimestamp"] = now
        if self._is_builtin(group_resource):
            self.admission.created(info, body)
        if self._tracks_generation(info):
            meta["generation"] = 1
        self.track(info, None, body, write, managed=managed)
        if dry_run:
            return body
        meta["resourceVersion"] = self.store.next_resource_version()
        self.store.put(group_resource, body)
        if group_resource == catalog.CRDS:
            self.registry.register_custom(*crd.resources(body))
        self.lifecycle.after_write(group_resource, None, body)
        return body

    def _placed(self, info: ResourceInfo, body: Obj) -> tuple[str, str]:
        """A new object's namespace and name (generated from `generateName`), checked: its
        namespace exists and is not terminating, its CRD is not being deleted."""
        group_resource = info.group_resource
        objectmeta.check_type(info, body)
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
            self.check_namespace(info, namespace, name)
        if self.registry.is_custom(group_resource):
            definition = self.store.get(catalog.CRDS, "", group_resource)
            if definition is not None and is_deleting(definition):
                raise MethodNotAllowed(
                    "create not allowed while custom resource definition is terminating",
                    details={"group": info.group, "kind": info.resource},
                )
        if not name and meta.get("generateName"):
            name = self._generated_name(group_resource, namespace, str(meta["generateName"]))
        if not name:
            fielderrors.raise_invalid(
                info,
                "",
                [fielderrors.required("metadata.name", "name or generateName is required")],
                minor=self.release.minor,
            )
        meta["name"] = name
        return namespace, name

    def update(
        self,
        info: ResourceInfo,
        body: Obj,
        write: fieldmanager.Write,
        *,
        managed: builtins.list[dict[str, Any]] | None = None,
        dry_run: bool = False,
    ) -> Obj:
        """`dry_run`: the object as it would be stored (its generation moved on, its
        resourceVersion the stored one), and nothing stored."""
        group_resource = info.group_resource
        objectmeta.check_type(info, body)
        meta: dict[str, Any] = body["metadata"]
        requested = meta.get("managedFields")
        namespace = target_namespace(info, body) or ""
        stored = self.existing(info, name_of_body(body), namespace)
        self.check_preconditions(info, stored, meta)
        stored_meta = metadata(stored)
        for field in (*SERVER_FIELDS, "name", "namespace"):
            if field in stored_meta:
                meta[field] = normalized_copy(stored_meta[field])
            else:
                meta.pop(field, None)
        if info.has_status:
            if "status" in stored:
                body["status"] = normalized_copy(stored["status"])
            else:
                body.pop("status", None)
        errors = objectmeta.metadata_errors(meta, self.release.minor)
        if self._is_builtin(group_resource):
            fielderrors.raise_invalid(info, str(meta["name"]), errors, minor=self.release.minor)
            self.admission.update(info, stored, body, str(meta["name"]))
        if self.registry.is_custom(group_resource):
            errors += self.schema_errors(info, body, stored)
        if is_deleting(stored):
            errors += objectmeta.no_new_finalizers(finalizers_of(stored), finalizers_of(body))
        fielderrors.raise_invalid(info, str(meta["name"]), errors, minor=self.release.minor)
        if group_resource == catalog.CRDS:
            crd.apply_defaults(body)
            crd.validate(info, body, stored, minor=self.release.minor)
            body["status"] = crd.initial_status(body, self.now(), stored.get("status"))
        body["apiVersion"] = self.storage_info(group_resource).api_version
        body = fold_string_data(body)  # as the API server stores Secrets
        if (problem := undecodable_data(body)) is not None:
            raise BadRequest(problem)
        meta = body["metadata"]
        if self._tracks_generation(info) and self._spec_changed(info, stored, body):
            meta["generation"] = int(stored_meta.get("generation") or 0) + 1
        self.track(info, stored, body, write, requested, managed=managed)
        if dry_run:
            return body
        if body == stored:
            return stored
        self.lifecycle.write(group_resource, body)
        if group_resource == catalog.CRDS:
            self.registry.register_custom(*crd.resources(body))
        return body

    def status_update(self, info: ResourceInfo, stored: Obj, body: Obj) -> Obj:
        """The object a write of `body` to the status subresource stores: a custom resource's
        (or a CRD's) stored object with the body's status, checked by its schema; a built-in
        kind's as its status strategy makes it (`status`)."""
        name = name_of_body(body)
        minor = self.release.minor
        if not self._is_builtin(info.group_resource):
            new: Obj = normalized_copy(stored)
            if "status" in body:
                new["status"] = body["status"]
            else:
                new.pop("status", None)
            if self.registry.is_custom(info.group_resource):
                errors = self.schema_errors(info, new, stored)
                fielderrors.raise_invalid(info, name, errors, minor=minor)
            return new
        meta: dict[str, Any] = body["metadata"]
        stored_meta = metadata(stored)
        for field in (*SERVER_FIELDS, "name", "namespace"):
            if field in stored_meta:
                meta[field] = normalized_copy(stored_meta[field])
            else:
                meta.pop(field, None)
        status_errors = self.admission.update_status(info, stored, body, name)
        errors = objectmeta.metadata_errors(metadata(body), minor)
        if is_deleting(stored):
            errors += objectmeta.no_new_finalizers(finalizers_of(stored), finalizers_of(body))
        fielderrors.raise_invalid(info, name, errors + status_errors, minor=minor)
        body["apiVersion"] = self.storage_info(info.group_resource).api_version
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
        return group_resource != catalog.CRDS and not self.registry.is_custom(group_resource)

    def _tracks_generation(self, info: ResourceInfo) -> bool:
        group_resource = info.group_resource
        since = catalog.GENERATION_SINCE.get(group_resource)
        if since is not None and not self.registry.is_custom(group_resource):
            return self.release.minor >= since
        return (
            self.registry.is_custom(group_resource)
            or group_resource in catalog.GENERATION_RESOURCES
            or (
                info.group in catalog.GENERATION_GROUPS
                and group_resource not in catalog.NO_GENERATION_RESOURCES
            )
        )

    def ownership_kind(self, info: ResourceInfo) -> fieldmanager.Kind:
        schemas = self.release.schemas
        if self.registry.is_custom(info.group_resource):
            root = self.schema(info)
        else:
            storage = self.storage_info(info.group_resource)
            root = schemas.root(storage.api_version, storage.kind)
        return fieldmanager.Kind(
            fieldmanager.Shape(root, schemas.resolve),
            fieldmanager.Shape(_OBJECT_META, schemas.resolve),
            info.has_status,
        )

    def track(
        self,
        info: ResourceInfo,
        old: Obj | None,
        new: Obj,
        write: fieldmanager.Write,
        requested: Any = None,
        *,
        managed: builtins.list[dict[str, Any]] | None = None,
    ) -> None:
        """Set `new`'s managedFields after a write of `old` (None: a create) by `write`;
        `managed`: already decided (a server-side apply)."""
        if managed is None:
            api_version = write.api_version or str(new.get("apiVersion") or info.api_version)
            write = replace(write, api_version=api_version)
            kind = self.ownership_kind(info)
            managed = fieldmanager.after_update(old, new, kind, write, requested)
        meta = new.setdefault("metadata", {})
        if managed:
            meta["managedFields"] = managed
        else:
            meta.pop("managedFields", None)

    def schema(self, info: ResourceInfo) -> dict[str, Any] | None:
        """The OpenAPI schema of a custom resource's version."""
        definition = self.store.get(catalog.CRDS, "", info.group_resource)
        return crd.schema_of(definition, info.version) if definition is not None else None

    def schema_errors(self, info: ResourceInfo, obj: Obj, old: Obj | None = None) -> list[Any]:
        """A custom resource pruned, defaulted and checked by its version's schema."""
        definition = self.store.get(catalog.CRDS, "", info.group_resource) or {}
        prune = not crd.preserves_unknown_fields(definition)
        return apply_schema(self.schema(info), obj, self.release.minor, old=old, prune=prune)

    def storage_info(self, group_resource: str) -> ResourceInfo:
        info = self.registry.storage(group_resource)
        if info is None:  # pragma: no cover - callers pass served resources
            raise NotFound(f"the server could not find the resource {group_resource}")
        return info

    def existing(self, info: ResourceInfo, name: str, namespace: str | None) -> Obj:
        if info.namespaced and not namespace:
            raise BadRequest(
                f"a namespace is required for the namespaced resource {info.group_resource}"
            )
        scope = (namespace or "") if info.namespaced else ""
        found = self.store.get(info.group_resource, scope, name)
        if found is None:
            raise NotFound(
                f'{info.group_resource} "{name}" not found',
                details={"name": name, "group": info.group, "kind": info.resource},
            )
        return found

    def check_namespace(self, info: ResourceInfo, namespace: str, name: str) -> None:
        ns = self.store.get(catalog.NAMESPACES, "", namespace)
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

    def check_preconditions(self, info: ResourceInfo, stored: Obj, meta: dict[str, Any]) -> None:
        stored_meta = metadata(stored)
        name = str(stored_meta.get("name"))
        uid = meta.get("uid")
        if uid and uid != stored_meta.get("uid"):
            raise self.conflict(
                info,
                name,
                f"Precondition failed: UID in precondition: {uid}, "
                f"UID in object meta: {stored_meta.get('uid')}",
            )
        rv = meta.get("resourceVersion")
        if rv and str(rv) != stored_meta.get("resourceVersion"):
            raise self.conflict(
                info,
                name,
                "the object has been modified; please apply your changes to the latest version "
                "and try again",
            )

    @staticmethod
    def conflict(info: ResourceInfo, name: str, why: str) -> Conflict:
        return Conflict(
            f'Operation cannot be fulfilled on {info.group_resource} "{name}": {why}',
            details={"name": name, "group": info.group, "kind": info.resource},
        )

    def _generated_name(self, group_resource: str, namespace: str, prefix: str) -> str:
        name = generate_name(prefix)
        for _ in range(_GENERATE_NAME_ATTEMPTS):
            if self.store.get(group_resource, namespace, name) is None:
                break
            name = generate_name(prefix)
        return name


def name_of_body(body: Obj) -> str:
    name = metadata(body).get("name")
    if not name:
        raise BadRequest(f"{identity(body)}: metadata.name is required")
    return str(name)
