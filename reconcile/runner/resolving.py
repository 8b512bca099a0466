"""What every controller kind resolves before a pass: the resources it names, by discovery,
and what the server keeps of their objects. A failure is the controller's, not the run's: the
other controllers go on."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from reconcile.cluster.errors import ApiError
from reconcile.cluster.protocol import Cluster
from reconcile.cluster.types import ResourceInfo
from reconcile.engine.flow import ControllerError, Named, Resolved
from reconcile.engine.semantic import is_builtin
from reconcile.schemas.builtin import kind_schemas
from reconcile.schemas.pruning import ResolvedSchema, with_object_meta

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def resolve(
    cluster: Cluster,
    where: str,
    named: Sequence[Named],
    schema: Callable[[ResourceInfo], Mapping[str, Any] | None],
) -> Resolved:
    """Every resource `where` names, in order; ControllerError naming the first unknown one's
    field (or what needs it), or a parent without the status subresource its status is written
    through. `schema`: what the server keeps of an owned resource's objects."""
    found: dict[str, ResourceInfo] = {}
    for item in named:
        try:
            info = cluster.discover(item.api_version, item.resource)
        except ApiError as exc:
            what = item.needed_for or item.field
            raise ControllerError(f"{where}: {what}: {exc.message}") from exc
        if item.parent and not info.has_status:
            raise ControllerError(
                f"{where}: {item.field}: {info.group_resource} has no status subresource "
                "(in Metacontroller's words, it does not have subresource 'Status' enabled); "
                "add `subresources: {status: {}}` to its CRD version"
            )
        found[item.field] = info
    # read once every resource is known: a controller that cannot run reads no schema
    schemas = {item.field: schema(found[item.field]) for item in named if item.owned}
    return Resolved(found, schemas)


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
