"""Listed objects as a pass keeps them: without the `metadata.managedFields` entries of other
field managers, which nothing in a pass reads and which are often the larger part of an object
as a real API server returns it (a nested FieldsV1 tree per manager).

The kept entries' FieldsV1 trees are mostly alike from object to object (every ConfigMap a
controller writes has the same `f:data` and `f:metadata` nodes): equal nodes are made one shared,
read-only node (`FieldsTable`), which is what keeps the kept entries small.

A write must then not carry the list it was listed with: a PUT with some entries would make them
the object's whole list (dropping the other managers' entries), while a PUT without the field
keeps what the server has, as it does for clients that do not know the field. Only a write
that changes the list sends it (moving an object to server-side apply, which lists keep whole
for that reason: `runner.snapshot.managers_to_keep`).
"""

from __future__ import annotations

import copy
import sys
from typing import Any, NoReturn

from reconcile.objects.jsondata import json_equal
from reconcile.objects.meta import Obj

MANAGED_FIELDS = "managedFields"
_TYPE_STRINGS = ("apiVersion", "kind")
_META_STRINGS = ("namespace", "creationTimestamp")
_OWNER_STRINGS = ("apiVersion", "kind", "name", "uid")
_ENTRY_STRINGS = ("manager", "operation", "apiVersion", "time", "fieldsType", "subresource")


class SharedFields(dict[str, Any]):
    """A FieldsV1 node that every object with an equal node holds: read only (a change would
    change them all), and copied into a plain dict by `dict()`, `copy` and `deepcopy`."""

    __slots__ = ()
    # One object per content within a table: hashing by identity will do.
    __hash__ = object.__hash__  # type: ignore[assignment]

    def _refuse(self, *_: Any, **__: Any) -> NoReturn:
        raise TypeError("a FieldsV1 node of a listed object is shared: change a copy")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return {key: copy.deepcopy(value, memo) for key, value in self.items()}

    def __reduce__(self) -> tuple[type[dict[str, Any]], tuple[dict[str, Any]]]:
        return dict, (dict(self),)


class FieldsTable:
    """Shares equal FieldsV1 nodes among the objects of one listing."""

    def __init__(self) -> None:
        self._empty = SharedFields()  # most nodes are leaves: `{}`
        self._nodes: dict[tuple[Any, ...], SharedFields] = {(): self._empty}

    def shared(self, tree: Any) -> Any:
        """The shared equivalent of a FieldsV1 tree; the tree itself when it is not one (a value
        that cannot be hashed)."""
        if type(tree) is not dict:
            return tree
        try:
            return self._node(tree)
        except TypeError:
            return tree

    def _node(self, node: dict[str, Any]) -> SharedFields:
        # Children first: the key holds them by identity, one object per content.
        key = tuple(
            [
                (k, (self._node(v) if v else self._empty) if type(v) is dict else v)
                for k, v in node.items()
            ]
        )
        found = self._nodes.get(key)
        if found is None:
            found = self._nodes[key] = SharedFields(key)
        return found


def slimmed(
    obj: Obj, keep_managers: frozenset[str] | None, table: FieldsTable | None = None
) -> Obj:
    """`obj` with only the managedFields entries of `keep_managers` (None: every entry; no
    field when none is left): a new top level and metadata when something is dropped; nested
    values are shared.
    Strings that repeat across objects (kinds, namespaces, the kept entries' managers, times and
    field names) are interned, so that thousands of objects hold one copy of each."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return obj
    _intern_at(obj, _TYPE_STRINGS)
    _intern_at(meta, _META_STRINGS)
    for ref in _as_list(meta.get("ownerReferences")):
        if isinstance(ref, dict):
            _intern_at(ref, _OWNER_STRINGS)  # an owner's children all name it
    entries = meta.get(MANAGED_FIELDS)
    if entries is None:
        return obj
    table = table or FieldsTable()
    kept = [
        _shared_entry(e, table)
        for e in _as_list(entries)
        if keep_managers is None or _manager(e) in keep_managers
    ]
    if len(kept) == len(_as_list(entries)) and kept:
        meta[MANAGED_FIELDS] = kept
        return obj
    slim_meta = {k: v for k, v in meta.items() if k != MANAGED_FIELDS}
    if kept:
        slim_meta[MANAGED_FIELDS] = kept
    return {**obj, "metadata": slim_meta}


def put_body(before: Obj | None, after: Obj) -> Obj:
    """What a PUT from `before` to `after` sends: `after` without `metadata.managedFields`
    unless the write changes them (moving an object to server-side apply rewrites the list),
    so that the server keeps its own list (see the module's note)."""
    if before is not None and json_equal(_managed_fields(before), _managed_fields(after)):
        return without_managed_fields(after)
    return after


def _managed_fields(obj: Obj) -> Any:
    meta = obj.get("metadata")
    return meta.get(MANAGED_FIELDS) if isinstance(meta, dict) else None


def without_managed_fields(obj: Obj) -> Obj:
    """`obj` without `metadata.managedFields` (a shallow copy when it had them)."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or MANAGED_FIELDS not in meta:
        return obj
    return {**obj, "metadata": {k: v for k, v in meta.items() if k != MANAGED_FIELDS}}


def _as_list(entries: Any) -> list[Any]:
    return entries if isinstance(entries, list) else []


def _manager(entry: Any) -> Any:
    return entry.get("manager") if isinstance(entry, dict) else None


def _shared_entry(entry: dict[str, Any], table: FieldsTable) -> dict[str, Any]:
    _intern_at(entry, _ENTRY_STRINGS)
    if "fieldsV1" in entry:
        entry["fieldsV1"] = table.shared(entry["fieldsV1"])
    return entry


def _intern_at(container: dict[str, Any], keys: tuple[str, ...]) -> None:
    for key in keys:
        value = container.get(key)
        if type(value) is str:
            container[key] = sys.intern(value)
