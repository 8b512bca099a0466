"""What a change to a repository does, object by object: the final states of two in-process
runs (the base and the head) compared, with the noise gone.

Pure: objects in, entries out. What is shown is the object itself, as the run left it (a
created object with the server's defaults), never what an annotation says it is. Noise is
what says nothing about intent: server-set metadata (already out of a dump), last-applied
annotations that truly record their object (`last_applied`; one that claims anything else is
data, shown), `status` unless asked, and the bookkeeping objects of rollouts
(ControllerRevisions) and runs (Events). Defaults both sides share cancel out in the field
comparison. Secrets are redacted, still showing which keys change. List items that all carry
a unique `name` (containers, ports, volumes, env) are matched by name, so inserting one does
not report every later item as changed. An object is a controller's when the controller's run
created it; anything else (a manifest's object, whatever owner references it names) is the
manifests'.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import field
from enum import StrEnum
from typing import Any

from reconcile.objects.jsondata import json_equal
from reconcile.objects.meta import Obj, split_api_version
from reconcile.objects.redact import redact, redact_secret_pair
from reconcile.objects.secrets import is_secret
from reconcile.records import dataclass
from reconcile.report.diff import ChangeOp
from reconcile.report.last_applied import without_records

MANIFESTS_GROUP = "manifests"  # objects no controller created
ORDER = "(order)"  # the path part of a named list whose items changed places
Key = tuple[str, str, str, str]  # API group, kind, namespace, name

# Bookkeeping, not intent: a rollout's revisions restate the child's template.
_NOT_COMPARED_KINDS = frozenset(
    {
        ("metacontroller.k8s.io", "ControllerRevision"),
        ("apps", "ControllerRevision"),
        ("", "Event"),
        ("events.k8s.io", "Event"),
    }
)


class ObjectChange(StrEnum):
    CREATED = "created"
    DELETED = "deleted"
    CHANGED = "changed"


class NamedItem(str):
    """A list item matched by its `name` in a path: rendered `[name=web]`."""


PathPart = str | int
FieldPath = tuple[PathPart, ...]


@dataclass(frozen=True)
class FieldChange:
    path: FieldPath
    op: ChangeOp
    before: Any = None
    after: Any = None

    @property
    def dotted(self) -> str:
        return dotted(self.path)


@dataclass(frozen=True)
class ObjectDiff:
    """One object that differs. `content` is what a created object holds (the object itself,
    never what an annotation of it claims) or what a deleted object held; `changes` are the
    fields of a changed one."""

    group: str  # the controller that created it, or MANIFESTS_GROUP
    api_version: str
    kind: str
    namespace: str
    name: str
    change: ObjectChange
    changes: tuple[FieldChange, ...] = ()
    content: Obj | None = None

    @property
    def title(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {where}"


@dataclass
class StateDiff:
    objects: list[ObjectDiff] = field(default_factory=list)
    compared: int = 0  # objects looked at, both sides together

    def count(self, change: ObjectChange) -> int:
        return sum(1 for o in self.objects if o.change is change)

    def groups(self) -> list[str]:
        """The groups that have entries: controllers by name, the manifests last."""
        names = sorted({o.group for o in self.objects} - {MANIFESTS_GROUP})
        return names + (
            [MANIFESTS_GROUP] if any(o.group == MANIFESTS_GROUP for o in self.objects) else []
        )


def compare_states(
    base: list[Obj],
    head: list[Obj],
    *,
    base_creators: Mapping[Key, str],
    head_creators: Mapping[Key, str],
    include_status: bool = False,
) -> StateDiff:
    """The objects that differ between two final states. `*_creators` map an object (`key`)
    to the controller whose run created it on that side, to group the objects by controller
    (an object is looked up on the side it is on)."""
    base_by_key = {key(o): o for o in base if _compared(o)}
    head_by_key = {key(o): o for o in head if _compared(o)}
    out = StateDiff(compared=len(base_by_key) + len(head_by_key))
    for found in sorted(base_by_key.keys() | head_by_key.keys()):
        old, new = base_by_key.get(found), head_by_key.get(found)
        if new is None:
            assert old is not None
            out.objects.append(_entry(old, ObjectChange.DELETED, base_creators))
            continue
        if old is None:
            out.objects.append(_entry(new, ObjectChange.CREATED, head_creators))
            continue
        before, after = _clean(old, include_status), _clean(new, include_status)
        if is_secret(new) or is_secret(old):
            red_before, red_after = redact_secret_pair(before, after)
            assert red_before is not None and red_after is not None
            changes = field_changes(before, after)
            # the paths of the real comparison, the values of the redacted one
            changes = [_redacted(c, red_before, red_after) for c in changes]
        else:
            changes = field_changes(before, after)
        if changes:
            entry = _entry(new, ObjectChange.CHANGED, head_creators)
            out.objects.append(
                ObjectDiff(**{**entry.__dict__, "changes": tuple(changes), "content": None})
            )
    return out


def key(obj: Obj) -> Key:
    """(API group, kind, namespace, name): an object's identity in a comparison."""
    meta = obj.get("metadata") or {}
    group, _ = split_api_version(str(obj.get("apiVersion") or ""))
    return (
        group,
        str(obj.get("kind") or ""),
        str(meta.get("namespace") or ""),
        str(meta.get("name") or ""),
    )


def _compared(obj: Obj) -> bool:
    group, kind, _, _ = key(obj)
    return (group, kind) not in _NOT_COMPARED_KINDS


def _entry(obj: Obj, change: ObjectChange, creators: Mapping[Key, str]) -> ObjectDiff:
    found = key(obj)
    _, kind, namespace, name = found
    content = _clean(obj, include_status=False) if change is not ObjectChange.CHANGED else None
    return ObjectDiff(
        group=creators.get(found, MANIFESTS_GROUP),
        api_version=str(obj.get("apiVersion") or ""),
        kind=kind,
        namespace=namespace,
        name=name,
        change=change,
        content=conventional_order(redact(content)) if content is not None else None,
    )


def _clean(obj: Obj, include_status: bool) -> Obj:
    """What is compared and shown of an object: without the last-applied annotations that
    truly record it, and without status unless asked."""
    out = dict(without_records(obj))
    if not include_status:
        out.pop("status", None)
    return out


_FIRST_KEYS = ("apiVersion", "kind", "metadata")
_FIRST_META = ("name", "generateName", "namespace", "labels", "annotations")


def conventional_order(obj: Obj) -> Obj:
    """`apiVersion`, `kind`, `metadata` (name and namespace first) and the rest as they came,
    `status` last: how people write manifests, whatever order a store kept."""
    out: Obj = {k: obj[k] for k in _FIRST_KEYS if k in obj}
    meta = out.get("metadata")
    if isinstance(meta, dict):
        out["metadata"] = {k: meta[k] for k in _FIRST_META if k in meta} | {
            k: v for k, v in meta.items() if k not in _FIRST_META
        }
    out.update({k: v for k, v in obj.items() if k not in out and k != "status"})
    if "status" in obj:
        out["status"] = obj["status"]
    return out


def _redacted(change: FieldChange, before: Obj, after: Obj) -> FieldChange:
    return FieldChange(
        change.path,
        change.op,
        _at(before, change.path) if change.op is not ChangeOp.ADD else None,
        _at(after, change.path) if change.op is not ChangeOp.REMOVE else None,
    )


def _at(value: Any, path: FieldPath) -> Any:
    for part in path:
        if isinstance(part, NamedItem) and isinstance(value, list):
            value = next((i for i in value if isinstance(i, dict) and i.get("name") == part), None)
        elif isinstance(value, dict) and isinstance(part, str):
            value = value.get(part)
        elif isinstance(value, list) and isinstance(part, int) and part < len(value):
            value = value[part]
        else:
            return None
    return value


# -- field comparison ----------------------------------------------------------------------------


def field_changes(before: Any, after: Any, path: FieldPath = ()) -> list[FieldChange]:
    """Leaf-level differences; a key or list item on one side only is one entry holding its
    whole value."""
    out: list[FieldChange] = []
    _diff(before, after, path, out)
    return out


def _diff(before: Any, after: Any, path: FieldPath, out: list[FieldChange]) -> None:
    if isinstance(before, dict) and isinstance(after, dict):
        for key, old in before.items():
            if key not in after:
                out.append(FieldChange((*path, key), ChangeOp.REMOVE, before=old))
            else:
                _diff(old, after[key], (*path, key), out)
        for key, new in after.items():
            if key not in before:
                out.append(FieldChange((*path, key), ChangeOp.ADD, after=new))
        return
    if isinstance(before, list) and isinstance(after, list):
        names_before, names_after = _names(before), _names(after)
        if names_before is not None and names_after is not None:
            _diff_named(before, after, names_before, names_after, path, out)
            return
        common = min(len(before), len(after))
        for i in range(common):
            _diff(before[i], after[i], (*path, i), out)
        for i in range(common, len(before)):
            out.append(FieldChange((*path, i), ChangeOp.REMOVE, before=before[i]))
        for i in range(common, len(after)):
            out.append(FieldChange((*path, i), ChangeOp.ADD, after=after[i]))
        return
    if not json_equal(before, after):
        out.append(FieldChange(path, ChangeOp.CHANGE, before=before, after=after))


def _names(items: list[Any]) -> list[str] | None:
    """The items' names when every item is an object with a unique string `name`."""
    names = [i.get("name") if isinstance(i, dict) else None for i in items]
    if not items or not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        return None
    return [str(n) for n in names]


def _diff_named(
    before: list[Any],
    after: list[Any],
    names_before: list[str],
    names_after: list[str],
    path: FieldPath,
    out: list[FieldChange],
) -> None:
    old = dict(zip(names_before, before, strict=True))
    new = dict(zip(names_after, after, strict=True))
    for name in names_before:
        if name not in new:
            out.append(FieldChange((*path, NamedItem(name)), ChangeOp.REMOVE, before=old[name]))
        else:
            _diff(old[name], new[name], (*path, NamedItem(name)), out)
    for name in names_after:
        if name not in old:
            out.append(FieldChange((*path, NamedItem(name)), ChangeOp.ADD, after=new[name]))
    if [n for n in names_before if n in new] != [n for n in names_after if n in old]:
        out.append(
            FieldChange((*path, ORDER), ChangeOp.CHANGE, before=names_before, after=names_after)
        )


def dotted(path: FieldPath) -> str:
    """`spec.template.spec.containers[name=web].image`; keys that are not identifiers are
    quoted: `metadata.labels["app.kubernetes.io/name"]`."""
    out = ""
    for part in path:
        if isinstance(part, NamedItem):
            out += f"[name={part}]"
        elif part == ORDER:
            out += f" {ORDER}"
        elif isinstance(part, int):
            out += f"[{part}]"
        elif part.replace("_", "a").replace("-", "a").isalnum() and not part[:1].isdigit():
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out or "(object)"


@dataclass(frozen=True)
class Side:
    """One side of a comparison: what was read (a directory, or a ref and its commit) and
    what went wrong on it (its objects are then incomplete)."""

    label: str  # `main`, `./base`
    commit: str = ""
    subject: str = ""
    errors: tuple[str, ...] = ()
    passes: int = 0
    converged: bool = True


@dataclass(frozen=True)
class Comparison:
    base: Side
    head: Side
    diff: StateDiff
    include_status: bool = False
    errors: tuple[str, ...] = ()  # the comparison itself could not be made

    @property
    def all_errors(self) -> list[str]:
        return [
            *self.errors,
            *(f"base ({self.base.label}): {e}" for e in self.base.errors),
            *(f"head ({self.head.label}): {e}" for e in self.head.errors),
        ]
