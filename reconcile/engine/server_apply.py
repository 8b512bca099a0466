"""Server-side apply, decided on the client so that a converged pass sends nothing.

The API server merges an applied configuration and tracks who owns each field
(`metadata.managedFields`). It would accept the same configuration every pass, but a request
that changes nothing is still a write, so the plan sends one only when the object differs:

* a desired value is not there (compared by meaning, as the client-side merge compares), or
* a field the manager applied last time is no longer in the configuration (its entry in
  managedFields says what it applied; the server removes such a field when no other manager
  owns it too).

An object last written client-side (it carries the last-applied annotation) is migrated
first, as `kubectl apply --server-side` migrates: one update moves the fields our client-side
writes own *and* that the annotation lists into the manager's Apply entry, and drops the
annotation. No field is lost and later removals still work.

Everything here is pure.
"""

from __future__ import annotations

from typing import Any

from reconcile.engine import apply
from reconcile.engine.semantic import is_builtin, is_quantity_path
from reconcile.objects import managed_fields as mf
from reconcile.objects.jsondata import json_copy, json_equal
from reconcile.objects.meta import Obj
from reconcile.records import dataclass

FIELD_MANAGER = "reconcile"
_ANNOTATION_PATH: mf.FieldPath = (
    "f:metadata",
    "f:annotations",
    mf.field_element(apply.LAST_APPLIED_ANNOTATION),
)


@dataclass(frozen=True)
class ServerApplyPlan:
    """`config` is what the apply request sends; `predicted` the object after it (None when
    nothing needs applying); `migrated` the update that moves a client-side object over
    first (None when there is none to move)."""

    config: Obj
    predicted: Obj | None
    migrated: Obj | None


def apply_config(desired: Obj) -> Obj:
    """The configuration to apply: the desired object without status, server-owned metadata
    and the last-applied annotation, nulls left out, and in built-in kinds the quantities a
    hook wrote as numbers (`cpu: 0.5`) written as the strings the API's schema declares, and
    ports given their default protocol."""
    config = apply.cleaned(desired)
    apply.drop_last_applied(config)
    builtin = is_builtin(str(config.get("apiVersion") or ""))
    result = _normalised(config, (), builtin)
    assert isinstance(result, dict)
    return result


def _normalised(value: Any, path: tuple[str | int, ...], builtin: bool) -> Any:
    if isinstance(value, dict):
        return {
            key: _normalised(item, (*path, key), builtin)
            for key, item in value.items()
            if item is not None
        }
    if isinstance(value, list):
        items = [_normalised(item, (*path, i), builtin) for i, item in enumerate(value)]
        if builtin and path and path[-1] == "ports":
            return [_with_protocol(item) for item in items]
        return items
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if builtin and numeric and is_quantity_path(path):
        return format(value, "g") if isinstance(value, float) else str(value)
    return value


def _with_protocol(port: Any) -> Any:
    """A port keyed by its number and protocol (a Service's, a container's) with the protocol
    the server defaults: kube-apiserver before 1.26 refuses to apply an item without its whole
    key, and the default is the same value."""
    numbered = isinstance(port, dict) and ("port" in port or "containerPort" in port)
    if numbered and "protocol" not in port:
        return {**port, "protocol": "TCP"}
    return port


def plan(observed: Obj | None, desired: Obj, manager: str = FIELD_MANAGER) -> ServerApplyPlan:
    config = apply_config(desired)
    if observed is None:
        return ServerApplyPlan(config, json_copy(config), None)
    owned = mf.owned_by(observed, manager, mf.APPLY) or frozenset()
    last = apply.last_applied(observed)
    base, migrated = observed, None
    if last is not None:
        migrated, carried = migrate(observed, last, manager)
        owned |= carried
        base = migrated
    stale = owned - mf.present_in(owned, config)
    if migrated is None and not stale and apply.covers(observed, config):
        return ServerApplyPlan(config, None, None)  # the usual case: converged, nothing copied
    predicted = json_copy(base)
    for path in sorted(stale, key=len, reverse=True):
        mf.remove(predicted, path)
    predicted = apply.merge(predicted, None, config)
    if not stale and json_equal(predicted, base):
        return ServerApplyPlan(config, None, migrated)
    return ServerApplyPlan(config, predicted, migrated)


def migrate(observed: Obj, last: Obj, manager: str) -> tuple[Obj, mf.FieldSet]:
    """The object with the fields its client-side entry owns and the annotation lists moved
    into the manager's Apply entry, and the annotation dropped; and those fields."""
    written = mf.owned_by(observed, manager, mf.UPDATE) or frozenset()
    apply.drop_last_applied(last)
    carried = mf.present_in(written - {_ANNOTATION_PATH}, apply.cleaned(last))
    migrated = json_copy(observed)
    apply.drop_last_applied(migrated)
    entries: list[dict[str, Any]] = []
    applied: dict[str, Any] | None = None
    for entry in mf.entries(migrated):
        mine = entry.get("manager") == manager and not entry.get("subresource")
        if mine and entry.get("operation") == mf.UPDATE:
            left = mf.parse_fields(entry.get("fieldsV1")) - carried - {_ANNOTATION_PATH}
            if left:
                entries.append({**entry, "fieldsV1": mf.fields_tree(left)})
            continue
        if mine and entry.get("operation") == mf.APPLY:
            applied = entry
            continue
        entries.append(entry)
    owned = carried | (mf.parse_fields(applied.get("fieldsV1")) if applied else frozenset())
    if owned:
        entries.append(
            {
                "manager": manager,
                "operation": mf.APPLY,
                "apiVersion": str(observed.get("apiVersion") or ""),
                "fieldsType": "FieldsV1",
                "fieldsV1": mf.fields_tree(owned),
            }
        )
    migrated["metadata"]["managedFields"] = entries
    return migrated, carried
