"""A request through one served version of a built-in resource, and the version its objects
are stored as: kube-apiserver decodes a write in the version it names (unknown fields dropped,
that version's defaults given: a v1beta1 Ingress path's `pathType`, a v1beta1 CRD's
`preserveUnknownFields: true`), converts it to the stored version, and shows every object as
the version it is read through (`conversion`). Errors about a resource served under a second
group (ingresses under `extensions`) name that group. Custom resources keep their own path: a
CRD's versions differ in name only."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from reconcile.cluster.errors import ApiError
from reconcile.cluster.memory import conversion
from reconcile.cluster.memory.conversion import crds
from reconcile.cluster.memory.resources.catalog import CRDS
from reconcile.cluster.memory.resources.discovery import ResourceRegistry
from reconcile.cluster.memory.resources.served import ALIASES
from reconcile.cluster.memory.strategies.admission import BuiltinAdmission
from reconcile.cluster.memory.validation import fielderrors, objectmeta
from reconcile.cluster.types import Obj, ResourceInfo


class Versions:
    def __init__(self, registry: ResourceRegistry, admission: BuiltinAdmission, minor: int) -> None:
        self.registry, self.admission, self.minor = registry, admission, minor

    def target(self, info: ResourceInfo) -> ResourceInfo:
        """The resource a request through `info` is handled as: the stored version."""
        if self.registry.is_custom(info.group_resource):
            return info
        return self.registry.stored(info)

    def incoming(self, info: ResourceInfo, body: Obj, *, decode: bool = True) -> Obj:
        """A write's body as the stored version holds it: decoded and defaulted in its own
        version first (`decode`: not for an apply's partial configuration)."""
        target = self.target(info)
        if target.api_version == info.api_version and target.group == info.group:
            return body
        objectmeta.check_type(info, body)
        group_resource = info.group_resource
        if decode:
            name = str((body.get("metadata") or {}).get("name") or "")
            self.admission.decode(info, body, name)
            conversion.version_defaults(group_resource, body)
            if info.group_resource == CRDS and info.version == "v1beta1":
                fielderrors.raise_invalid(info, name, crds.v1beta1_errors(body), minor=self.minor)
        elif group_resource == CRDS:  # an applied v1beta1 CRD's `version` is its `versions`
            conversion.version_defaults(group_resource, body)
        return conversion.convert(body, target.api_version, group_resource, self.minor)

    def outgoing(self, info: ResourceInfo, obj: Obj) -> Obj:
        """A stored object as the version `info` shows it."""
        if self.registry.is_custom(info.group_resource):
            return obj
        return conversion.convert(obj, info.api_version, info.group_resource, self.minor)

    @contextmanager
    def speaking_as(self, info: ResourceInfo) -> Iterator[None]:
        """Errors name `info`'s group where its objects are stored under another."""
        stored = ALIASES.get(info.group_resource)
        if stored is None:
            yield
            return
        stored_group = stored.split(".", 1)[1]
        try:
            yield
        except ApiError as exc:
            exc.message = exc.message.replace(f".{stored_group}", f".{info.group}")
            exc.args = (exc.message,)
            if exc.details.get("group") == stored_group:
                exc.details["group"] = info.group
            raise
