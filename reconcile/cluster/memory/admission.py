"""What kube-apiserver does to a built-in object between reading the request and storing it:
decode against the release's schema (unknown fields dropped, wrong types refused, quantities
canonical), default, then validate (422s with the server's wording), immutable fields included
on update. Custom resources and CRDs have their own path (`crd`, `schema`)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from reconcile.cluster.errors import BadRequest
from reconcile.cluster.memory import builtin_rules, defaults
from reconcile.cluster.memory import validation as v
from reconcile.cluster.memory.releases import Release
from reconcile.cluster.types import Obj, ResourceInfo

log = logging.getLogger(__name__)


class BuiltinAdmission:
    def __init__(self, release: Release) -> None:
        self.release = release
        self.defaulter = defaults.Defaulter(release.minor)

    def create(self, info: ResourceInfo, body: Obj, name: str, services: Iterable[Obj]) -> None:
        """Decode, default and validate a new object in place (raises BadRequest / Invalid)."""
        schema_errors = self._decode(info, body, name)
        if info.group_resource == "services":
            self._note_allocations(services)
        self.defaulter.apply(info.group_resource, body)
        self.defaulter.protect(info.group_resource, body)
        errors = builtin_rules.create_errors(info.group_resource, body)
        v.raise_invalid(info, name, _merged(schema_errors, errors))

    def update(self, info: ResourceInfo, stored: Obj, body: Obj, name: str) -> None:
        schema_errors = self._decode(info, body, name)
        group_resource = info.group_resource
        if group_resource == "services":
            defaults.keep_allocations(stored, body)
        if group_resource == "jobs.batch":
            defaults.keep_job_selector(stored, body)
        self.defaulter.apply(group_resource, body)
        if group_resource == "daemonsets.apps":
            defaults.next_template_generation(stored, body)
        errors = builtin_rules.update_errors(group_resource, stored, body, self.release.minor)
        v.raise_invalid(info, name, _merged(schema_errors, errors))

    def created(self, info: ResourceInfo, body: Obj) -> None:
        """What the create strategy sets once the object has its uid."""
        if info.group_resource == "jobs.batch":
            uid = str(body["metadata"]["uid"])
            defaults.assign_job_selector(body, uid, self.release.minor)

    def initial_status(self, info: ResourceInfo, body: Obj) -> Obj:
        return self.defaulter.initial_status(info.group_resource, body)

    def _decode(self, info: ResourceInfo, body: Obj, name: str) -> list[v.FieldError]:
        """Decode in place; returns the schema's field errors (refused with the others)."""
        api_version = str(body.get("apiVersion") or info.api_version)
        outcome = self.release.schemas.decode(api_version, info.kind, body)
        if outcome.decode_errors:
            raise BadRequest(
                f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: '
                + "; ".join(outcome.decode_errors)
            )
        for path in outcome.pruned:
            log.warning(
                '%s "%s": unknown field "%s" (dropped by the API server)', info.kind, name, path
            )
        return outcome.errors

    def _note_allocations(self, services: Iterable[Obj]) -> None:
        ips: set[str] = set()
        ports: set[int] = set()
        for service in services:
            spec: Any = service.get("spec") or {}
            ips.update(str(ip) for ip in spec.get("clusterIPs") or [spec.get("clusterIP")] if ip)
            ports.update(int(p["nodePort"]) for p in spec.get("ports") or [] if p.get("nodePort"))
        self.defaulter.used_ips = ips
        self.defaulter.used_node_ports = ports


def _merged(first: list[v.FieldError], second: list[v.FieldError]) -> list[v.FieldError]:
    """Both lists in order, each error once."""
    seen = {(e.field, e.type) for e in first}
    return first + [e for e in second if (e.field, e.type) not in seen]
