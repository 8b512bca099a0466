"""ConfigMaps and Secrets: a Secret's `type: Opaque` default and immutable type, and the data of
either kind frozen once it is marked `immutable`."""

from __future__ import annotations

from reconcile.cluster.memory.strategies.kinds.base import Context, Errors, KindRules, immutable
from reconcile.cluster.memory.validation import fielderrors
from reconcile.objects.meta import Obj


def _immutable_data_errors(old: Obj, new: Obj, _: int) -> Errors:
    if old.get("immutable") is not True:
        return []
    errors: Errors = []
    if new.get("immutable") is not True:
        errors.append(
            fielderrors.forbidden("immutable", "field is immutable when `immutable` is set")
        )
    for field in ("data", "binaryData"):
        if (old.get(field) or {}) != (new.get(field) or {}):
            errors.append(
                fielderrors.forbidden(field, "field is immutable when `immutable` is set")
            )
    return errors


def _secret(obj: Obj, _: Context) -> None:
    obj.setdefault("type", "Opaque")


def _secret_update_errors(old: Obj, new: Obj, minor: int) -> Errors:
    errors = _immutable_data_errors(old, new, minor)
    if old.get("type") != new.get("type"):
        errors += immutable(old.get("type"), new.get("type"), "type")
    return errors


CONFIGMAPS = KindRules(update_errors=_immutable_data_errors)
SECRETS = KindRules(default=_secret, update_errors=_secret_update_errors)
