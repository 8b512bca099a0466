"""Value types shared by the backends: resource descriptions and list pages."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

Obj = dict[str, Any]


class Propagation(StrEnum):
    BACKGROUND = "Background"
    FOREGROUND = "Foreground"
    ORPHAN = "Orphan"


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


@dataclass
class ObjectList:
    """One page of a LIST: the items, the list's resourceVersion and the `continue` token."""

    items: list[Obj]
    resource_version: str = ""
    continue_token: str = ""
    remaining_item_count: int | None = None
