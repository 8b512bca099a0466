"""What discovery says about a resource: a plain value, shared by the engine and the backends."""

from __future__ import annotations

from dataclasses import field

from reconcile.records import dataclass


@dataclass(frozen=True)
class ResourceInfo:
    """What discovery says about one resource of one group-version."""

    group: str
    version: str
    resource: str  # plural, e.g. "deployments"
    kind: str
    namespaced: bool
    has_status: bool = False
    verbs: frozenset[str] = field(default_factory=frozenset)
    short_names: tuple[str, ...] = ()
    singular: str = ""
    # discovery's storageVersionHash: two resources with the same one are the same objects
    # (ingresses under extensions/v1beta1 and networking.k8s.io/v1); "" when not given.
    # Not part of the value: a resource is the same one whoever described it.
    storage_hash: str = field(default="", compare=False)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """`deployments.apps`, `pods` (the form kubectl and RBAC use)."""
        return f"{self.resource}.{self.group}" if self.group else self.resource

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        """The REST path of the collection or of one object."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.resource}"
        if name:
            base += f"/{name}"
        return base

    @property
    def key(self) -> str:
        """`<Kind>.<apiVersion>`, the key Metacontroller's hook requests use (`Pod.v1`)."""
        return f"{self.kind}.{self.api_version}"
