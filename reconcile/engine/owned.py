"""A rule for objects a controller creates and owns (a decorator's attachments, a map's
outputs), resolved through discovery."""

from __future__ import annotations

from dataclasses import dataclass

from reconcile.api.controller import OwnedRule
from reconcile.objects.resource import ResourceInfo


@dataclass(frozen=True)
class OwnedType:
    rule: OwnedRule
    resource: ResourceInfo

    @property
    def key(self) -> str:
        """`<Kind>.<apiVersion>`, as hook requests key these objects."""
        return self.resource.key
