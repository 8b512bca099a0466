"""Listed objects as a pass keeps them: without the `metadata.managedFields` entries of other
field managers, which nothing in a pass reads and which are often the larger part of an object
as a real API server returns it (a nested FieldsV1 tree per manager).

The kept entries' FieldsV1 trees are mostly alike from object to object (every ConfigMap a
controller writes has the same `f:data` and `f:metadata` nodes): equal nodes are made one shared,
read-only node (`SharingTable`), which is what keeps the kept entries small. So are other values
that repeat from object to object: whole managedFields lists (written in the same second by the
same manager), the ownerReferences of one owner's children, and their labels.

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


def _refuse(*_: Any, **__: Any) -> NoReturn:
    raise TypeError("this value of a listed object is shared with other objects: change a copy")


class SharedDict(dict[str, Any]):
    """A map that every listed object with an equal one holds (a FieldsV1 node, a managedFields
    entry, labels, an owner reference): read only (a change would change them all), and copied
    into a plain dict by `dict()`, `copy` and `deepcopy`."""

    __slots__ = ()
    # One object per content within a table: hashing by identity will do.
    __hash__ = object.__hash__  # type: ignore[assignment]

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return {key: copy.deepcopy(value, memo) for key, value in self.items()}

    def __reduce__(self) -> tuple[type[dict[str, Any]], tuple[dict[str, Any]]]:
        return dict, (dict(self),)


class SharedList(list[Any]):
    """A list that every listed object with an equal one holds (managedFields, ownerReferences):
    read only like `SharedDict`, and copied into a plain list."""

    __slots__ = ()
    __hash__ = object.__hash__  # type: ignore[assignment]

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(value, memo) for value in self]

    def __reduce__(self) -> tuple[type[list[Any]], tuple[list[Any]]]:
        return list, (list(self),)


class SharingTable:
    """Shares equal values among the objects of one listing: FieldsV1 nodes, managedFields
    lists, ownerReferences lists and labels. A value that is not what it should be (not a map
    of strings, say) is left as it is."""

    def __init__(self) -> None:
        self._empty = SharedDict()  # most FieldsV1 nodes are leaves: `{}`
        self._nodes: dict[tuple[Any, ...], SharedDict] = {(): self._empty}
        self._lists: dict[tuple[Any, ...], SharedList] = {}

    def fields(self, tree: Any) -> Any:
        """The shared equivalent of a FieldsV1 tree."""
        if type(tree) is not dict:
            return tree
        try:
            return self._node(tree)
        except TypeError:  # a value that cannot be hashed
            return tree

    def flat_map(self, value: Any) -> Any:
        """The shared equivalent of a map of plain values (labels)."""
        if type(value) is not dict:
            return value
        try:
            return self._flat(value)
        except TypeError:
            return value

    def entries(self, entries: list[Any]) -> Any:
        """The shared equivalent of a managedFields list (FieldsV1 trees shared first)."""
        try:
            maps = [self._flat(_with_shared_tree(e, self)) for e in entries]
        except TypeError:  # not a map, or a value that cannot be hashed
            return entries
        return self._list(maps)

    def owner_references(self, refs: Any) -> Any:
        """The shared equivalent of an ownerReferences list: an owner's children all have it."""
        if type(refs) is not list:
            return refs
        try:
            return self._list([self._flat(ref) for ref in refs])
        except TypeError:
            return refs

    def _flat(self, value: dict[str, Any]) -> SharedDict:
        if type(value) is not dict:
            raise TypeError("not a map")
        key = tuple(value.items())
        found = self._nodes.get(key)
        if found is None:
            found = self._nodes[key] = SharedDict(key)
        return found

    def _list(self, items: list[SharedDict]) -> SharedList:
        key = tuple(items)  # shared maps hash by identity: one per content
        found = self._lists.get(key)
        if found is None:
            found = self._lists[key] = SharedList(items)
        return found

    def _node(self, node: dict[str, Any]) -> SharedDict:
        # Children first: the key holds them by identity, one object per content.
        key = tuple(
            [
                (k, (self._node(v) if v else self._empty) if type(v) is dict else v)
                for k, v in node.items()
            ]
        )
        found = self._nodes.get(key)
        if found is None:
            found = self._nodes[key] = SharedDict(key)
        return found


def slimmed(
    obj: Obj, keep_managers: frozenset[str] | None, table: SharingTable | None = None
) -> Obj:
    """`obj` with only the managedFields entries of `keep_managers` (None: every entry; no
    field when none is left): a new top level and metadata when something is dropped; nested
    values are shared.
    Values that repeat across objects (kinds and namespaces, managedFields, ownerReferences,
    labels) are shared through `table`, so that thousands of objects hold one copy of each."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return obj
    table = table or SharingTable()
    _intern_at(obj, _TYPE_STRINGS)
    _intern_at(meta, _META_STRINGS)
    for key, share in (("ownerReferences", table.owner_references), ("labels", table.flat_map)):
        if key in meta:
            meta[key] = share(meta[key])
    entries = meta.get(MANAGED_FIELDS)
    if entries is None:
        return obj
    kept = [e for e in _as_list(entries) if keep_managers is None or _manager(e) in keep_managers]
    if len(kept) == len(_as_list(entries)) and kept:
        meta[MANAGED_FIELDS] = table.entries(kept)
        return obj
    slim_meta = {k: v for k, v in meta.items() if k != MANAGED_FIELDS}
    if kept:
        slim_meta[MANAGED_FIELDS] = table.entries(kept)
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


def _with_shared_tree(entry: Any, table: SharingTable) -> dict[str, Any]:
    if type(entry) is not dict:
        raise TypeError("not a map")
    if "fieldsV1" not in entry:
        return entry
    return {**entry, "fieldsV1": table.fields(entry["fieldsV1"])}


def _intern_at(container: dict[str, Any], keys: tuple[str, ...]) -> None:
    for key in keys:
        value = container.get(key)
        if type(value) is str:
            container[key] = sys.intern(value)
