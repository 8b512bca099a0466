"""`metadata.managedFields`: which field manager owns which fields, in the API server's
`FieldsV1` form, read and written as plain data.

A field set is a tree of path elements: `f:<name>` a map field, `k:<json>` the item of an
associative list whose key fields are that JSON object, `v:<json>` the item of a set list,
`i:<n>` a list item by index. A node with `.` (or with no children at all) is owned itself.
Here a set is a `frozenset` of paths, each a tuple of those element strings; reading and
writing the tree is lossless.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from reconcile.objects.jsondata import json_equal
from reconcile.objects.meta import Obj

FieldPath = tuple[str, ...]
FieldSet = frozenset[FieldPath]

APPLY = "Apply"
UPDATE = "Update"
_SELF = "."
_MISSING = object()


def parse_fields(tree: Any) -> FieldSet:
    """The paths of a FieldsV1 tree (an invalid tree reads as no fields)."""
    paths: set[FieldPath] = set()
    if isinstance(tree, dict):
        _collect(tree, (), paths)
    return frozenset(paths)


def _collect(node: dict[str, Any], prefix: FieldPath, out: set[FieldPath]) -> None:
    for key, child in node.items():
        if key == _SELF:
            if prefix:
                out.add(prefix)
            continue
        path = (*prefix, key)
        if isinstance(child, dict) and child:
            _collect(child, path, out)
        else:
            out.add(path)


def fields_tree(paths: Iterable[FieldPath]) -> dict[str, Any]:
    """The FieldsV1 tree of a set of paths (`.` marks a node owned and also a parent)."""
    ordered = sorted(paths, key=len)
    tree: dict[str, Any] = {}
    for path in ordered:
        node = tree
        for element in path:
            node = node.setdefault(element, {})
    for path in ordered:
        node = tree
        for element in path:
            node = node[element]
        if node and _SELF not in node:
            node[_SELF] = {}
    return tree


def entries(obj: Obj) -> list[dict[str, Any]]:
    """The object's managedFields entries that are well-formed maps."""
    managed = (obj.get("metadata") or {}).get("managedFields")
    if not isinstance(managed, list):
        return []
    return [entry for entry in managed if isinstance(entry, dict)]


def owned_by(obj: Obj, manager: str, operation: str, subresource: str = "") -> FieldSet | None:
    """The fields the manager's entry for that operation owns; None when it has no entry."""
    for entry in entries(obj):
        if (
            entry.get("manager") == manager
            and entry.get("operation") == operation
            and (entry.get("subresource") or "") == subresource
        ):
            return parse_fields(entry.get("fieldsV1"))
    return None


def field_element(name: str) -> str:
    return f"f:{name}"


def key_element(key: Mapping[str, Any]) -> str:
    return "k:" + json.dumps(dict(key), separators=(",", ":"))


def value_element(value: Any) -> str:
    return "v:" + json.dumps(value, separators=(",", ":"))


def describe(path: FieldPath) -> str:
    """A path as the API server writes it in a conflict: `.spec.ports[port=80,protocol="TCP"]`."""
    text = ""
    for element in path:
        kind, _, rest = element.partition(":")
        if kind == "f":
            text += f".{rest}"
        elif kind == "k":
            key = _loads(rest)
            items = key.items() if isinstance(key, dict) else ()
            text += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in items) + "]"
        elif kind == "v":
            text += f"[={rest}]"
        else:
            text += f"[{rest}]"
    return text


# --- fields against a value -------------------------------------------------------------


def select(value: Any, element: str) -> Any:
    """The part of `value` a path element names, or `_MISSING`.

    An associative list item matches when its key fields equal the element's; a key field the
    item leaves out matches too (a field the server defaults, such as a port's `protocol`, is
    in the server's key but not in what people write)."""
    kind, _, rest = element.partition(":")
    if kind == "f":
        return value.get(rest, _MISSING) if isinstance(value, dict) else _MISSING
    if not isinstance(value, list):
        return _MISSING
    if kind == "k":
        key = _loads(rest)
        if not isinstance(key, dict):
            return _MISSING
        for item in value:
            if isinstance(item, dict) and all(
                k not in item or json_equal(item[k], v) for k, v in key.items()
            ):
                return item
        return _MISSING
    if kind == "v":
        wanted = _loads(rest)
        return next((item for item in value if json_equal(item, wanted)), _MISSING)
    if kind == "i" and rest.isdigit() and int(rest) < len(value):
        return value[int(rest)]
    return _MISSING


def present_in(paths: FieldSet, value: Any) -> FieldSet:
    """The paths that lead somewhere in `value`."""
    return frozenset(path for path in paths if _reach(value, path) is not _MISSING)


def _reach(value: Any, path: FieldPath) -> Any:
    for element in path:
        value = select(value, element)
        if value is _MISSING:
            return _MISSING
    return value


def remove(obj: Obj, path: FieldPath) -> bool:
    """Remove what the path names from `obj` (in place); False when it is not there."""
    parent: Any = obj
    for element in path[:-1]:
        parent = select(parent, element)
        if parent is _MISSING:
            return False
    last = path[-1]
    child = select(parent, last)
    if child is _MISSING:
        return False
    if last.startswith("f:"):
        del parent[last[2:]]
    else:
        parent.remove(child)
    return True


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
