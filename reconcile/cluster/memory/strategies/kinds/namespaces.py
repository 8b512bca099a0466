"""Namespaces: the `kubernetes` finalizer in `spec.finalizers` (set on create; an update keeps
the stored list, which only the finalize subresource changes), `status.phase: Active` (defaulted
again by every status write that leaves it out; `Terminating` only while being deleted), and
1.21+ the label `kubernetes.io/metadata.name`."""

from __future__ import annotations

from reconcile.cluster.memory.strategies.kinds.base import (
    Context,
    Errors,
    KindRules,
    as_dict,
    child,
)
from reconcile.cluster.memory.validation import fielderrors
from reconcile.objects.meta import Obj, is_deleting

NAMESPACE_FINALIZER = "kubernetes"


def _namespace(obj: Obj, context: Context) -> None:
    if context.minor >= 21:
        meta = child(obj, "metadata")
        child(meta, "labels")["kubernetes.io/metadata.name"] = str(meta.get("name", ""))


def _add_finalizer(obj: Obj) -> None:
    spec = as_dict(obj.get("spec"))
    finalizers = [str(f) for f in spec.get("finalizers") or []]
    if NAMESPACE_FINALIZER not in finalizers:
        finalizers.append(NAMESPACE_FINALIZER)
    obj["spec"] = {**spec, "finalizers": finalizers}


def _keep_finalizers(stored: Obj, obj: Obj) -> None:
    stored_spec = as_dict(stored.get("spec"))
    spec = {k: val for k, val in as_dict(obj.get("spec")).items() if k != "finalizers"}
    if "finalizers" in stored_spec:
        spec["finalizers"] = list(stored_spec["finalizers"])
    obj["spec"] = spec


def _default_phase(_: Obj, namespace: Obj, __: int) -> None:
    status = child(namespace, "status")
    if not status.get("phase"):
        status["phase"] = "Active"


def _phase_errors(_: Obj, namespace: Obj, __: int) -> Errors:
    phase = as_dict(namespace.get("status")).get("phase")
    if is_deleting(namespace):
        if phase != "Terminating":
            detail = "may only be 'Terminating' if `deletionTimestamp` is not empty"
            return [fielderrors.invalid_value("status.Phase", phase, detail)]
    elif phase != "Active":
        detail = "may only be 'Active' if `deletionTimestamp` is empty"
        return [fielderrors.invalid_value("status.Phase", phase, detail)]
    return []


NAMESPACES = KindRules(
    default=_namespace,
    on_create=_add_finalizer,
    keep=_keep_finalizers,
    initial_status=lambda _, __: {"phase": "Active"},
    status_update=_default_phase,
    status_errors=_phase_errors,
)
