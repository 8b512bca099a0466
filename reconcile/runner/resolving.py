"""What every controller kind resolves before a pass: its resources, by discovery. A failure
is the controller's, not the run's: the other controllers go on."""

from __future__ import annotations

from reconcile.cluster.errors import ApiError
from reconcile.cluster.protocol import Cluster
from reconcile.cluster.types import ResourceInfo


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
            f"{where}: spec.parentResource: {parent.group_resource} has no status subresource; "
            "add `subresources: {status: {}}` to its CRD version"
        )
    return parent


def within_parent_scope(where: str, field: str, parent: ResourceInfo, owned: ResourceInfo) -> None:
    """A namespaced parent can own only namespaced objects (owner references cannot cross)."""
    if parent.namespaced and not owned.namespaced:
        raise ControllerError(
            f"{where}: {field}: {owned.group_resource} is cluster-scoped "
            f"and the parent {parent.group_resource} is namespaced"
        )
