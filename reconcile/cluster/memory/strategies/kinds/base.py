"""What the in-process API server knows of one built-in kind, in one record (kube-apiserver
keeps it in one strategy file per kind): its defaults, the finalizers admission adds on create,
what an update keeps of the stored object, its validation beyond the schema, the status a create
gives it, what its create strategy sets once the object has a uid, and what a write of its status
subresource keeps, defaults and refuses."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import Any

from reconcile.cluster.memory.validation import fielderrors
from reconcile.objects.meta import Obj
from reconcile.records import dataclass

Errors = list[fielderrors.FieldError]


@dataclass
class Context:
    """The release (`minor`) and what is allocated cluster-wide (Service IPs, node ports)."""

    minor: int
    used_ips: set[str] = field(default_factory=set)
    used_node_ports: set[int] = field(default_factory=set)


def _nothing(*_: Any) -> None:
    return None


def _no_errors(*_: Any) -> Errors:
    return []


def _no_status(_: Obj, __: int) -> Obj:
    return {}


def _no_status_errors(*_: Any) -> Errors:
    return []


@dataclass(frozen=True)
class KindRules:
    # defaults, on create and update (a value the writer set is never replaced)
    default: Callable[[Obj, Context], None] = _nothing
    # what admission adds on create only (protection finalizers, a Namespace's finalizer)
    on_create: Callable[[Obj], None] = _nothing
    # on update, before defaults: what the stored object keeps when the update leaves it out
    keep: Callable[[Obj, Obj], None] = _nothing
    # on update, after defaults (stored, updated)
    after_update: Callable[[Obj, Obj], None] = _nothing
    # refused on create, and on update too
    errors: Callable[[Obj], Errors] = _no_errors
    # refused on update only (stored, updated, minor): fields the server keeps immutable
    update_errors: Callable[[Obj, Obj, int], Errors] = _no_errors
    # the status a create gives the object (its status subresource being ours to set)
    initial_status: Callable[[Obj, int], Obj] = _no_status
    # what the create strategy sets once the object has its uid (object, minor)
    created: Callable[[Obj, int], None] = _nothing
    # a status write (PUT .../status), after the spec is reset from the stored object: what the
    # kind's status strategy also keeps of it, and the status defaults (stored, written, minor)
    status_update: Callable[[Obj, Obj, int], None] = _nothing
    # refused on a status write (stored, written, minor)
    status_errors: Callable[[Obj, Obj, int], Errors] = _no_status_errors
    # a change of metadata.annotations bumps metadata.generation (Deployments)
    annotations_are_spec: bool = False


NO_RULES = KindRules()


def child(obj: Obj, key: str) -> Obj:
    """`obj[key]`, made a mapping when it is not one."""
    value = obj.get(key)
    if not isinstance(value, dict):
        value = {}
        obj[key] = value
    return value


def as_dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def items(obj: Obj, key: str) -> list[Obj]:
    """The mappings of the list `obj[key]` (none when it is not a list)."""
    value = obj.get(key)
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict)]


def spec_of(obj: Obj) -> Obj:
    return as_dict(obj.get("spec"))


def immutable(old: Any, new: Any, path: str) -> Errors:
    if old == new:
        return []
    return [fielderrors.invalid_value(path, new, "field is immutable")]


def add_finalizer(obj: Obj, finalizer: str) -> None:
    meta = child(obj, "metadata")
    finalizers = meta.get("finalizers")
    if not isinstance(finalizers, list):
        finalizers = []
    if finalizer not in finalizers:
        finalizers.append(finalizer)
    meta["finalizers"] = finalizers
