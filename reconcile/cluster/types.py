"""Value types shared by the backends: resource descriptions and list pages."""

from __future__ import annotations

from enum import StrEnum

from reconcile.objects.meta import Obj
from reconcile.objects.resource import ResourceInfo
from reconcile.records import dataclass

__all__ = ["Obj", "ObjectList", "Propagation", "ResourceInfo"]


class Propagation(StrEnum):
    BACKGROUND = "Background"
    FOREGROUND = "Foreground"
    ORPHAN = "Orphan"


@dataclass
class ObjectList:
    """One page of a LIST: the items, the list's resourceVersion and the `continue` token."""

    items: list[Obj]
    resource_version: str = ""
    continue_token: str = ""
    remaining_item_count: int | None = None
