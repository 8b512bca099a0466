"""Field ownership (`metadata.managedFields`) and server-side apply, as kube-apiserver keeps
them (structured-merge-diff), for the in-process cluster.

* An update (POST, PUT) makes its manager own every field it set to a new value; other
  managers lose those fields. Fields that are gone are no one's.
* An apply makes its manager own exactly the fields of its configuration: desired values are
  merged in (maps by key, associative lists by their key fields, set lists as sets, other lists
  whole); a field it applied before and left out now is removed unless another manager owns it
  too; a field another manager owns with a different value is a conflict, unless forced (then
  the other manager loses it).

How lists and maps merge comes from the schema: the built-in kinds' OpenAPI
(`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`, `x-kubernetes-map-type`), a custom
resource's `openAPIV3Schema`; a list the schema says nothing of is atomic.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reconcile.cluster.errors import FieldConflict
from reconcile.objects import managed_fields as mf
from reconcile.objects.jsondata import json_copy, json_equal
from reconcile.objects.meta import SERVER_OWNED_METADATA, Obj
from reconcile.records import dataclass

Schema = dict[str, Any]
Resolve = Callable[[Schema], Schema]
Leaves = dict[mf.FieldPath, Any]

# Key fields the server defaults, so an item written without them still has its full key.
_KEY_DEFAULTS: dict[str, Any] = {"protocol": "TCP"}
# metadata nobody owns: the object's identity, and what the server keeps for itself
_UNOWNED_METADATA = SERVER_OWNED_METADATA | {"name", "namespace"}
_ITEM = ("item",)  # a list item's own node: present or not, never "changed"


class Shape:
    """A position in a schema: how the value there merges."""

    def __init__(self, schema: Schema | None, resolve: Resolve) -> None:
        self._schema = resolve(schema) if schema else {}
        self._resolve = resolve

    def field(self, name: str) -> Shape:
        properties = self._schema.get("properties")
        if isinstance(properties, dict) and isinstance(properties.get(name), dict):
            return Shape(properties[name], self._resolve)
        extra = self._schema.get("additionalProperties")
        return Shape(extra if isinstance(extra, dict) else None, self._resolve)

    def items(self) -> Shape:
        items = self._schema.get("items")
        return Shape(items if isinstance(items, dict) else None, self._resolve)

    def atomic_map(self) -> bool:
        return self._schema.get("x-kubernetes-map-type") == "atomic"

    def list_type(self) -> tuple[str, tuple[str, ...]]:
        declared = self._schema.get("x-kubernetes-list-type")
        keys = self._schema.get("x-kubernetes-list-map-keys")
        if declared == "map" and isinstance(keys, list) and keys:
            return "map", tuple(str(k) for k in keys)
        merge_key = self._schema.get("x-kubernetes-patch-merge-key")
        if declared is None and isinstance(merge_key, str):
            return "map", (merge_key,)
        if declared == "set":
            return "set", ()
        return "atomic", ()


@dataclass(frozen=True)
class Kind:
    """What ownership needs of a resource: its schema, and whether status is a subresource
    (then writes to the object leave status alone, and status writes touch only it)."""

    root: Shape
    metadata: Shape
    status_subresource: bool


def leaves(obj: Obj, kind: Kind, *, status: bool) -> Leaves:
    """Every owned path of the object with its value (`status`: the status part only)."""
    out: Leaves = {}
    for key, value in obj.items():
        if key in ("apiVersion", "kind"):
            continue
        if kind.status_subresource and (key == "status") != status:
            continue
        if key == "metadata" and isinstance(value, dict):
            for name, item in value.items():
                if name not in _UNOWNED_METADATA:
                    _walk(item, kind.metadata.field(name), ("f:metadata", f"f:{name}"), out)
            continue
        _walk(value, kind.root.field(key), (f"f:{key}",), out)
    return out


def _walk(value: Any, shape: Shape, path: mf.FieldPath, out: Leaves) -> None:
    if isinstance(value, dict) and value and not shape.atomic_map():
        for key, item in value.items():
            _walk(item, shape.field(key), (*path, f"f:{key}"), out)
        return
    if isinstance(value, list) and value:
        list_type, keys = shape.list_type()
        if list_type == "map" and all(isinstance(item, dict) for item in value):
            for item in value:
                item_path = (*path, mf.key_element(_key_of(item, keys)))
                out[item_path] = _ITEM
                for key, field_value in item.items():
                    _walk(field_value, shape.items().field(key), (*item_path, f"f:{key}"), out)
            return
        if list_type == "set":
            for item in value:
                out[(*path, mf.value_element(item))] = item
            return
    out[path] = value


def _key_of(item: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {
        k: item[k] if k in item else _KEY_DEFAULTS[k]
        for k in keys
        if k in item or k in _KEY_DEFAULTS
    }


# --- managedFields entries ----------------------------------------------------------------

EntryKey = tuple[str, str, str]  # manager, operation, subresource


@dataclass
class Entry:
    api_version: str
    time: str
    fields: set[mf.FieldPath]


def read_entries(managed: Any) -> dict[EntryKey, Entry]:
    out: dict[EntryKey, Entry] = {}
    for entry in managed if isinstance(managed, list) else []:
        if not isinstance(entry, dict):
            continue
        key = (
            str(entry.get("manager") or ""),
            str(entry.get("operation") or ""),
            str(entry.get("subresource") or ""),
        )
        out[key] = Entry(
            str(entry.get("apiVersion") or ""),
            str(entry.get("time") or ""),
            set(mf.parse_fields(entry.get("fieldsV1"))),
        )
    return out


def write_entries(entries: dict[EntryKey, Entry]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for (manager, operation, subresource), entry in entries.items():
        if not entry.fields:
            continue
        written: dict[str, Any] = {
            "manager": manager,
            "operation": operation,
            "apiVersion": entry.api_version,
            "time": entry.time,
            "fieldsType": "FieldsV1",
            "fieldsV1": mf.fields_tree(entry.fields),
        }
        if subresource:
            written["subresource"] = subresource
        out.append(written)
    return out


@dataclass(frozen=True)
class Write:
    """Who writes, and when (for the entry's `time`)."""

    manager: str
    api_version: str
    time: str
    subresource: str = ""


def after_update(
    old: Obj | None, new: Obj, kind: Kind, write: Write, requested: Any = None
) -> list[dict[str, Any]]:
    """The managedFields of `new` after an update from `old` (None: a create). `requested`:
    the managedFields the request carried (they replace the stored ones when they differ)."""
    status = write.subresource == "status"
    stored = (old or {}).get("metadata", {}).get("managedFields")
    base = requested if isinstance(requested, list) and requested != stored else stored
    entries = read_entries(base)
    old_leaves = leaves(old, kind, status=status) if old is not None else {}
    new_leaves = leaves(new, kind, status=status)
    changed = {
        path
        for path, value in new_leaves.items()
        if not _same_leaf(old_leaves.get(path), value, path in old_leaves)
    }
    present = set(new_leaves)
    if kind.status_subresource:  # fields of the other part stay owned as they are
        present |= set(leaves(new, kind, status=not status))
    for entry in entries.values():
        entry.fields = (entry.fields - changed) & present
    if changed:
        key = (write.manager, mf.UPDATE, write.subresource)
        mine = entries.setdefault(key, Entry(write.api_version, write.time, set()))
        mine.fields |= changed
        mine.time, mine.api_version = write.time, write.api_version
    return write_entries(entries)


def _same_leaf(old: Any, new: Any, existed: bool) -> bool:
    return existed and (old is new or json_equal(old, new))


# --- apply -----------------------------------------------------------------------------------


def server_apply(current: Obj | None, config: Obj, kind: Kind, write: Write, *, force: bool) -> Obj:
    """The object after applying `config` (managedFields set; defaults not yet applied).
    Raises FieldConflict naming every conflicting field and manager unless `force`."""
    config_leaves = leaves(config, kind, status=False)
    config_paths = set(config_leaves)
    if current is None:
        created = json_copy(config)
        created.setdefault("metadata", {})["managedFields"] = write_entries(
            {(write.manager, mf.APPLY, ""): Entry(write.api_version, write.time, config_paths)}
        )
        return created
    entries = read_entries(current.get("metadata", {}).get("managedFields"))
    current_leaves = leaves(current, kind, status=False)
    mine_key = (write.manager, mf.APPLY, "")
    conflicts: list[tuple[str, str, mf.FieldPath]] = []
    for key, entry in entries.items():
        if key == mine_key or key[2]:
            continue
        for path in entry.fields & config_paths:
            if path in current_leaves and not json_equal(current_leaves[path], config_leaves[path]):
                conflicts.append((key[0], entry.api_version, path))
                if force:
                    entry.fields.discard(path)
    if conflicts and not force:
        raise _conflict(conflicts)
    previous = entries.get(mine_key)
    merged = json_copy(current)
    stale = (previous.fields if previous else set()) - config_paths
    others = set().union(*(e.fields for k, e in entries.items() if k != mine_key))
    for path in sorted(stale, key=len, reverse=True):
        if path not in others and not any(p[: len(path)] == path for p in others):
            mf.remove(merged, path)
    _merge(merged, config, kind)
    entries[mine_key] = Entry(write.api_version, write.time, config_paths)
    merged.setdefault("metadata", {})["managedFields"] = write_entries(entries)
    return merged


def _merge(target: Obj, config: Obj, kind: Kind) -> None:
    for key, value in config.items():
        if key in ("apiVersion", "kind"):
            target[key] = value
        elif key == "metadata" and isinstance(value, dict):
            meta = target.setdefault("metadata", {})
            for name, item in value.items():
                if name not in _UNOWNED_METADATA or name not in meta:
                    meta[name] = _merged(meta.get(name), item, kind.metadata.field(name))
        elif key == "status" and kind.status_subresource:
            continue
        else:
            target[key] = _merged(target.get(key), value, kind.root.field(key))


def _merged(current: Any, value: Any, shape: Shape) -> Any:
    if isinstance(current, dict) and isinstance(value, dict) and not shape.atomic_map():
        result = dict(current)
        for key, item in value.items():
            result[key] = _merged(current.get(key), item, shape.field(key))
        return result
    if isinstance(current, list) and isinstance(value, list):
        list_type, keys = shape.list_type()
        if list_type == "set":
            return current + [item for item in value if item not in current]
        if list_type == "map" and all(isinstance(i, dict) for i in current + value):
            merged = list(current)
            index = {mf.key_element(_key_of(item, keys)): i for i, item in enumerate(merged)}
            for item in value:
                at = index.get(mf.key_element(_key_of(item, keys)))
                if at is None:
                    merged.append(json_copy(item))
                else:
                    merged[at] = _merged(merged[at], item, shape.items())
            return merged
    return json_copy(value)


def _conflict(conflicts: list[tuple[str, str, mf.FieldPath]]) -> FieldConflict:
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f'conflict with "{manager}" using {api_version}',
            "field": mf.describe(path),
        }
        for manager, api_version, path in sorted(conflicts)
    ]
    count = len(conflicts)
    listed = "\n".join(f"- {c['message']}: {c['field']}" for c in causes)
    return FieldConflict(
        f"Apply failed with {count} conflict{'s' if count != 1 else ''}: "
        + (f"{causes[0]['message']}: {causes[0]['field']}" if count == 1 else listed),
        details={"causes": causes},
    )
