"""PersistentVolumeClaims and PersistentVolumes.

Defaults: `volumeMode: Filesystem`; a volume's `persistentVolumeReclaimPolicy: Retain`; the
protection finalizers `kubernetes.io/pvc-protection` / `pv-protection` (on create only, as the
StorageObjectInUseProtection admission plugin adds them); `status.phase: Pending` (defaulted
again by every status write that leaves it out).

Validation: a claim has access modes and a storage request; on update its spec is immutable but
its requests (and 1.29+ `volumeAttributesClassName`).
"""

from __future__ import annotations

from reconcile.cluster.memory.strategies.kinds.base import (
    Context,
    Errors,
    KindRules,
    add_finalizer,
    as_dict,
    child,
    spec_of,
)
from reconcile.cluster.memory.validation import fielderrors
from reconcile.objects.meta import Obj


def _claim(obj: Obj, _: Context) -> None:
    child(obj, "spec").setdefault("volumeMode", "Filesystem")


def _volume(obj: Obj, _: Context) -> None:
    spec = child(obj, "spec")
    spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    spec.setdefault("volumeMode", "Filesystem")


def _claim_errors(obj: Obj) -> Errors:
    spec = spec_of(obj)
    errors: Errors = []
    if not spec.get("accessModes"):
        errors.append(
            fielderrors.required("spec.accessModes", "at least 1 access mode is required")
        )
    requests = as_dict(as_dict(spec.get("resources")).get("requests"))
    if "storage" not in requests:
        errors.append(fielderrors.required("spec.resources[storage]"))
    return errors


def _claim_update_errors(old: Obj, new: Obj, minor: int) -> Errors:
    def rest(spec: Obj) -> Obj:
        copy = {k: val for k, val in spec.items() if k != "volumeAttributesClassName"}
        resources = {k: val for k, val in as_dict(copy.get("resources")).items() if k != "requests"}
        copy["resources"] = resources
        return copy

    if rest(spec_of(old)) == rest(spec_of(new)):
        return []
    detail = "spec is immutable after creation except resources.requests"
    detail += (
        " and volumeAttributesClassName for bound claims" if minor >= 29 else " for bound claims"
    )
    return [fielderrors.forbidden("spec", detail)]


def _pending(_: Obj, __: int) -> Obj:
    return {"phase": "Pending"}


def _default_phase(_: Obj, obj: Obj, __: int) -> None:
    status = child(obj, "status")
    if not status.get("phase"):
        status["phase"] = "Pending"


PERSISTENTVOLUMECLAIMS = KindRules(
    default=_claim,
    on_create=lambda obj: add_finalizer(obj, "kubernetes.io/pvc-protection"),
    errors=_claim_errors,
    update_errors=_claim_update_errors,
    initial_status=_pending,
    status_update=_default_phase,
)
PERSISTENTVOLUMES = KindRules(
    default=_volume,
    on_create=lambda obj: add_finalizer(obj, "kubernetes.io/pv-protection"),
    initial_status=_pending,
    status_update=_default_phase,
)
