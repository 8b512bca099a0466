"""Namespaces: the `kubernetes` finalizer in `spec.finalizers` (set on create; an update keeps
the stored list, which only the finalize subresource changes), `status.phase: Active`, and
1.21+ the label `kubernetes.io/metadata.name`."""

from __future__ import annotations

from reconcile.cluster.memory.kinds.base import Context, KindRules, as_dict, child
from reconcile.objects.meta import Obj

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


NAMESPACES = KindRules(
    default=_namespace,
    on_create=_add_finalizer,
    keep=_keep_finalizers,
    initial_status=lambda _, __: {"phase": "Active"},
)
