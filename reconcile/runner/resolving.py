"""What every controller kind resolves before a pass: its resources, by discovery. A failure
is the controller's, not the run's: the other controllers go on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconcile.cluster.errors import ApiError
from reconcile.cluster.protocol import Cluster
from reconcile.cluster.types import ResourceInfo
from reconcile.engine.semantic import is_builtin
from reconcile.schemas.builtin import kind_schemas
from reconcile.schemas.pruning import ResolvedSchema, with_object_meta

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


class ControllerError(Exception):
    """The controller as a whole cannot run this pass (e.g. an unknown resource)."""


def discover(
    cluster: Cluster, where: str, field: str, api_version: str, resource: str
) -> ResourceInfo:
    """The resource a controller's `field` names; ControllerError naming both when unknown."""
    try:
        return cluster.discover(api_version, resource)
    except ApiError as exc:
        raise ControllerError(f"{where}: {field}: {exc.message}") from exc


def parent_resource(cluster: Cluster, where: str, api_version: str, resource: str) -> ResourceInfo:
    """`spec.parentResource`: known, and with the status subresource the parent's status is
    written through."""
    parent = discover(cluster, where, "spec.parentResource", api_version, resource)
    if not parent.has_status:
        raise ControllerError(
            f"{where}: spec.parentResource: {parent.group_resource} has no status subresource "
            "(in Metacontroller's words, it does not have subresource 'Status' enabled); add "
            "`subresources: {status: {}}` to its CRD version"
        )
    return parent


def within_parent_scope(where: str, field: str, parent: ResourceInfo, owned: ResourceInfo) -> None:
    """A namespaced parent can own only namespaced objects (owner references cannot cross)."""
    if parent.namespaced and not owned.namespaced:
        raise ControllerError(
            f"{where}: {field}: {owned.group_resource} is cluster-scoped "
            f"and the parent {parent.group_resource} is namespaced"
        )


def kind_schema(cluster: Cluster, resource: ResourceInfo) -> Mapping[str, Any] | None:
    """What the API server keeps of an object of `resource`: a built-in kind's schema in the
    server's release (`schemas.builtin`), a custom resource's CRD `openAPIV3Schema` for the
    served version. None when anything is kept (a CRD made as v1beta1, with
    `preserveUnknownFields`) or nothing is known (an aggregated API, a CRD that cannot be read:
    the run then learns from its first writes)."""
    if is_builtin(resource.api_version):
        schemas = kind_schemas(cluster.server_release())
        root = schemas.root(resource.api_version, resource.kind)
        return ResolvedSchema(root, schemas.resolve) if root is not None else None
    name = f"{resource.resource}.{resource.group}"
    try:  # a LIST of one, so that a converged pass stays LISTs only
        crds = cluster.discover("apiextensions.k8s.io/v1", "customresourcedefinitions")
        found = cluster.list(crds, field_selector=f"metadata.name={name}").items
    except ApiError:
        return None
    if not found:
        return None
    spec = found[0].get("spec") or {}
    if spec.get("preserveUnknownFields") is True:
        return None  # a CRD made as v1beta1 keeps every field it is given
    versions = spec.get("versions") or []
    version = next((v for v in versions if v.get("name") == resource.version), None)
    schema = ((version or {}).get("schema") or {}).get("openAPIV3Schema")
    if not isinstance(schema, Mapping):
        return None
    schemas = kind_schemas(cluster.server_release())
    meta = schemas.defs.get(OBJECT_META)
    return with_object_meta(schema, ResolvedSchema(meta, schemas.resolve)) if meta else schema
