"""What kube-apiserver does to a built-in object between reading the request and storing it:
decode against the release's schema (unknown fields dropped, wrong types refused, quantities
canonical), default, then validate (422s with the server's wording), immutable fields included
on update. Custom resources and CRDs have their own path (`crd`, `custom_resource`)."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from reconcile.cluster.errors import BadRequest
from reconcile.cluster.memory.resources.releases import Release
from reconcile.cluster.memory.strategies import kinds, status
from reconcile.cluster.memory.strategies.kinds.services import note_allocations
from reconcile.cluster.memory.validation import fielderrors
from reconcile.cluster.types import Obj, ResourceInfo

log = logging.getLogger(__name__)


class BuiltinAdmission:
    """Decoding by the release's schemas, then each kind's rules (`kinds.RULES`)."""

    def __init__(self, release: Release) -> None:
        self.release = release
        self.context = kinds.Context(release.minor)
        self.zero_values = status.ZeroValues(release.schemas)

    def create(self, info: ResourceInfo, body: Obj, name: str, services: Iterable[Obj]) -> None:
        """Decode, default and validate a new object in place (raises BadRequest / Invalid)."""
        rules = kinds.rules_for(info.group_resource)
        schema_errors = self.decode(info, body, name)
        if info.group_resource == "services":
            note_allocations(list(services), self.context)
        rules.default(body, self.context)
        rules.on_create(body)
        fielderrors.raise_invalid(
            info, name, _merged(schema_errors, rules.errors(body)), minor=self.release.minor
        )

    def update(self, info: ResourceInfo, stored: Obj, body: Obj, name: str) -> None:
        rules = kinds.rules_for(info.group_resource)
        schema_errors = self.decode(info, body, name)
        rules.keep(stored, body)
        rules.default(body, self.context)
        rules.after_update(stored, body)
        errors = rules.errors(body) + rules.update_errors(stored, body, self.release.minor)
        fielderrors.raise_invalid(
            info, name, _merged(schema_errors, errors), minor=self.release.minor
        )

    def update_status(
        self, info: ResourceInfo, stored: Obj, body: Obj, name: str
    ) -> list[fielderrors.FieldError]:
        """Make a status write's body the object it stores, in place (see `status`); returns
        the kind's status errors (raises BadRequest for a body that cannot be decoded)."""
        rules = kinds.rules_for(info.group_resource)
        api_version = str(body.get("apiVersion") or info.api_version)
        self.decode(info, body, name)  # its enum and required checks are not a status's
        rules.default(body, kinds.Context(self.release.minor))  # allocations are the spec's
        status.reset_to_stored(stored, body)
        rules.status_update(stored, body, self.release.minor)
        self.zero_values.fill(self.release.schemas.root(api_version, info.kind), body)
        return rules.status_errors(stored, body, self.release.minor)

    def created(self, info: ResourceInfo, body: Obj) -> None:
        """What the create strategy sets once the object has its uid."""
        kinds.rules_for(info.group_resource).created(body, self.release.minor)

    def initial_status(self, info: ResourceInfo, body: Obj) -> Obj:
        return kinds.rules_for(info.group_resource).initial_status(body, self.release.minor)

    def decode(self, info: ResourceInfo, body: Obj, name: str) -> list[fielderrors.FieldError]:
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


def _merged(
    first: list[fielderrors.FieldError], second: list[fielderrors.FieldError]
) -> list[fielderrors.FieldError]:
    """Both lists in order, each error once."""
    seen = {(e.field, e.type) for e in first}
    return first + [e for e in second if (e.field, e.type) not in seen]
