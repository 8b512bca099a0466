"""What the API server keeps of an object under its kind's schema: kube-apiserver drops the
fields a structural schema (a CRD version's `openAPIV3Schema`) has no place for, and its decoder
drops those a built-in kind's Go type lacks. One walk, for both, on plain dicts."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from reconcile.objects.terminal import one_line

Schema = Mapping[str, Any]

# The fields every object keeps at its root (and an embedded resource at its own), whatever a
# CRD's schema says of them: the server manages them itself.
ROOT_FIELDS = frozenset({"apiVersion", "kind", "metadata"})


def kept(schema: Schema | None, path: tuple[str, ...]) -> bool:
    """Whether an object of `schema` keeps a field at `path`. No schema: kept."""
    node: Schema | None = schema
    for depth, step in enumerate(path):
        if not isinstance(node, Mapping) or (depth == 0 and step in ROOT_FIELDS):
            return True
        node = child_schema(node, step)
        if node is DROP:
            return False
    return True


def pruned_object(
    obj: Mapping[str, Any], schema: Schema | None
) -> tuple[dict[str, Any], list[str]]:
    """`obj` as the server keeps it under its kind's `schema`, and the paths of the fields it
    drops (`spec.jobTemplate.spec.x`; `[*]` for any item of a list), each once."""
    dropped: list[str] = []
    if not isinstance(schema, Mapping):
        return dict(obj), dropped
    result: dict[str, Any] = {}
    for key, value in obj.items():
        if key == "metadata" and isinstance(meta := _object_meta(schema), Mapping):
            result[key] = pruned(value, meta, key, dropped)  # ObjectMeta drops what it lacks
            continue
        if key in ROOT_FIELDS:
            result[key] = value
            continue
        child = child_schema(schema, key)
        if child is DROP:
            dropped.append(one_line(key))
            continue
        result[key] = pruned(value, child, key, dropped)
    return result, list(dict.fromkeys(dropped))


def drops_any(obj: Mapping[str, Any], schema: Schema | None) -> bool:
    """Whether `pruned_object` would drop a field of `obj`: the same walk, building nothing
    (nearly every object a hook asks for keeps all its fields)."""
    if not isinstance(schema, Mapping):
        return False
    for key, value in obj.items():
        if key == "metadata" and isinstance(meta := _object_meta(schema), Mapping):
            if drops_under(value, meta):
                return True
            continue
        if key in ROOT_FIELDS:
            continue
        child = child_schema(schema, key)
        if child is DROP or drops_under(value, child):
            return True
    return False


def drops_under(value: Any, node: Schema | None) -> bool:
    """Whether `pruned` would drop anything of `value` under `node`, building nothing."""
    if node is None:
        return False
    if isinstance(value, dict):
        for key, item in value.items():
            child = child_schema(node, key)
            if child is DROP:
                return True
            if child is not None and isinstance(item, dict | list) and drops_under(item, child):
                return True
        return False
    if isinstance(value, list):
        items = node.get("items")
        return isinstance(items, Mapping) and any(drops_under(item, items) for item in value)
    return False


def _object_meta(schema: Schema) -> Schema | None:
    """The schema's `metadata` when it is ObjectMeta itself (it lists `name` and `labels`):
    a built-in kind's, or the one a CRD's schema is given (`with_object_meta`)."""
    properties = schema.get("properties")
    meta = properties.get("metadata") if isinstance(properties, Mapping) else None
    if not isinstance(meta, Mapping):
        return None
    fields = meta.get("properties")
    return meta if isinstance(fields, Mapping) and "name" in fields and "labels" in fields else None


def with_object_meta(schema: Schema, object_meta: Schema) -> Schema:
    """A CRD version's schema whose `metadata` is ObjectMeta: the API server decodes every
    custom resource's metadata as ObjectMeta, whatever the CRD's schema says of it."""
    properties = schema.get("properties")
    fields = dict(properties) if isinstance(properties, Mapping) else {}
    fields["metadata"] = object_meta
    return {**schema, "properties": fields}


def pruned(value: Any, node: Schema | None, path: str, dropped: list[str]) -> Any:
    """`value` (at `path`) under `node`; what is dropped goes to `dropped`."""
    return _pruned(value, node, (path,), dropped)


def _pruned(value: Any, node: Schema | None, path: tuple[str, ...], dropped: list[str]) -> Any:
    # `path` as its parts, joined only for a field dropped: most walks drop nothing
    if node is None:
        return value
    if isinstance(value, dict):
        result: dict[str, Any] = {}
        for key, item in value.items():
            child = child_schema(node, key)
            if child is DROP:
                dropped.append("".join(path) + "." + one_line(key))
                continue
            if child is None or not isinstance(item, dict | list):
                result[key] = item  # anything goes here, or a scalar: kept as it is
                continue
            result[key] = _pruned(item, child, (*path, "." + one_line(key)), dropped)
        return result
    if isinstance(value, list):
        items = node.get("items")
        items = items if isinstance(items, Mapping) else None
        if items is None:
            return list(value)
        return [_pruned(item, items, (*path, "[*]"), dropped) for item in value]
    return value


def child_schema(node: Schema, key: str) -> Schema | None:
    """The schema of field `key` of an object of schema `node`: None when anything goes
    (preserved, or no schema), `DROP` when the field is pruned."""
    if type(node) is ResolvedSchema:
        return node.child(key)
    return _child_schema(node, key)


def _child_schema(node: Schema, key: str) -> Schema | None:
    properties = node.get("properties")
    if isinstance(properties, Mapping) and key in properties:
        child = properties[key]
        return child if isinstance(child, Mapping) else None
    if node.get("x-kubernetes-preserve-unknown-fields") is True:
        return None
    extra = node.get("additionalProperties")
    if isinstance(extra, Mapping):
        return extra
    if extra is True:
        return None
    if node.get("x-kubernetes-embedded-resource") is True and key in ROOT_FIELDS:
        return None
    if not isinstance(properties, Mapping) and node.get("type") != "object":
        return None  # no structure given here (int-or-string, an empty schema): kept
    return DROP


DROP: Schema = {"x-reconcile-dropped": True}


class ResolvedSchema(Mapping[str, Any]):
    """A schema whose `$ref`s (a built-in kind's definitions) read as what they name, at every
    depth, resolved as the walk reaches them."""

    def __init__(self, node: Schema, resolve: Callable[[Schema], Schema]) -> None:
        self._node = resolve(node)
        self._resolve = resolve
        # Each field resolved once: a kind's schema is walked for every object of the kind,
        # and resolving and wrapping again was most of the walk. (Threads may race to fill
        # an entry; both compute the same value.)
        self._fields: dict[str, Any] = {}
        self._children: dict[str, Schema | None] = {}  # child_schema's answers, by field

    def child(self, key: str) -> Schema | None:
        """`child_schema(self, key)`, worked out once per field."""
        try:
            return self._children[key]
        except KeyError:
            found = self._children[key] = _child_schema(self, key)
            return found

    def __getitem__(self, key: str) -> Any:
        try:
            return self._fields[key]
        except KeyError:
            value = self._fields[key] = self._wrap(self._node[key])
            return value

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self._node else default

    def __contains__(self, key: object) -> bool:
        return key in self._node

    def __iter__(self) -> Iterator[str]:
        return iter(self._node)

    def __len__(self) -> int:
        return len(self._node)

    def _wrap(self, value: Any) -> Any:
        if isinstance(value, Mapping):
            return ResolvedSchema(value, self._resolve)
        if isinstance(value, list):
            return [self._wrap(item) for item in value]
        return value
