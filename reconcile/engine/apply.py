"""Metacontroller's "apply": a convention-based three-way merge, like `kubectl apply`.

The hook's desired child is merged into the observed child using the last applied state
(kept in an annotation) to tell removed fields from fields that someone else set:

* maps: keys that were applied last time but are no longer desired are removed, desired keys
  are merged recursively, and keys only in observed (server defaults, other controllers) stay;
* scalars, type changes and explicit nulls: desired wins;
* lists are replaced by desired unless they look like list-maps: every item of the observed,
  last-applied and desired lists is a map and all share a conventional key (`containerPort`,
  `port`, `mountPath`, `name`, `uid`, `ip`, `path`, first match wins, and its values must be
  unique within each list); list-map items merge by key like map entries;
* lists of maps without such a key whose observed and desired lengths are equal merge item by
  item (a StatefulSet's `volumeClaimTemplates`, tolerations): otherwise the fields the server
  fills into each item would be taken away, and put back, on every pass;
* values the server stores in another form with the same meaning (`semantic.py`: quantities,
  dropped nulls, empty and zero values) keep the observed form, so they are no change;
* server-owned metadata and the top-level `status` are never written.

Everything here is pure and never mutates its arguments.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from typing import Any

from reconcile.engine.semantic import Path, dropped_by_server, is_builtin, same_scalar
from reconcile.objects.jsondata import json_copy, json_equal
from reconcile.objects.meta import SERVER_OWNED_METADATA, Obj, metadata
from reconcile.objects.secrets import fold_string_data

LAST_APPLIED_ANNOTATION = "metacontroller.k8s.io/last-applied-configuration"

# The conventional merge keys of list-maps, in order of preference.
_LIST_MAP_KEYS: tuple[str, ...] = (
    "containerPort",
    "port",
    "mountPath",
    "name",
    "uid",
    "ip",
    "path",
)


def last_applied(observed: Obj) -> Obj | None:
    """The object recorded in observed's annotation; None when absent or not valid JSON (then
    the merge treats last-applied as empty, like kubectl does for objects it did not create)."""
    meta = observed.get("metadata")
    if not isinstance(meta, dict):
        return None
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict):
        return None
    text = annotations.get(LAST_APPLIED_ANNOTATION)
    if not isinstance(text, str):
        return None
    try:
        recorded = json.loads(text)
    except ValueError:
        return None
    return recorded if isinstance(recorded, dict) else None


def prepare_desired(desired: Obj) -> Obj:
    """A deep copy of desired with status and server-owned metadata removed and the
    last-applied annotation set to the compact JSON of that cleaned object (the annotation
    itself excluded from the JSON). What a create sends."""
    clean = cleaned(desired)
    drop_last_applied(clean)
    prepared = json_copy(clean)
    _set_last_applied(prepared, _compact_json(clean))
    return prepared


def merge(observed: Obj, last: Obj | None, desired: Obj) -> Obj:
    """The three-way merge above (no annotation handling)."""
    result = json_copy(observed)
    rules = _Rules(is_builtin(str(desired.get("apiVersion") or observed.get("apiVersion") or "")))
    rules.merge_map(result, cleaned(last or {}), cleaned(desired), ())
    return result


def apply(observed: Obj, desired: Obj) -> Obj:
    """What an update sends: merge(observed, last_applied(observed), cleaned desired) with the
    last-applied annotation set to the new desired (as in prepare_desired). Never mutates its
    arguments."""
    clean = cleaned(desired)
    drop_last_applied(clean)
    last = last_applied(observed)
    if last is not None:
        drop_last_applied(last)  # a fresh object from json.loads: ours to change
    result = merge(observed, last, clean)
    _set_last_applied(result, _compact_json(clean))
    return result


def needs_update(observed: Obj, applied: Obj) -> bool:
    """False when `applied` equals `observed` (so no request is sent)."""
    return not json_equal(observed, applied)


def update_for(observed: Obj, desired: Obj) -> Obj | None:
    """What an update sends (`apply`), or None when it would change nothing. In a steady pass
    nearly every child is unchanged: those are recognised without copying either object."""
    if _plainly_unchanged(observed, desired):
        return None
    merged = apply(observed, desired)
    return merged if needs_update(observed, merged) else None


# --- merging ---------------------------------------------------------------------------


class _Rules:
    """The merge for one object; `builtin` selects the server's rules for built-in kinds."""

    def __init__(self, builtin: bool) -> None:
        self.builtin = builtin

    def merge_value(self, observed: Any, last: Any, desired: Any, path: Path) -> Any:
        """Merge one value; `observed` is a private copy and may be changed in place."""
        if isinstance(observed, dict) and isinstance(desired, dict):
            return self.merge_map(observed, last if isinstance(last, dict) else {}, desired, path)
        if isinstance(observed, list) and isinstance(desired, list):
            return self.merge_list(observed, last if isinstance(last, list) else [], desired, path)
        scalars = not isinstance(desired, dict | list) and not isinstance(observed, dict | list)
        if scalars and same_scalar(path, observed, desired, builtin=self.builtin):
            return observed  # stored in another form with the same meaning
        return json_copy(desired)

    def merge_map(
        self, observed: dict[str, Any], last: dict[str, Any], desired: dict[str, Any], path: Path
    ) -> dict[str, Any]:
        for key in last:
            if key not in desired:
                observed.pop(key, None)
        for key, value in desired.items():
            if key not in observed and dropped_by_server(key, value, self.builtin):
                continue  # the server would store nothing: adding it is no change
            observed[key] = self.merge_value(observed.get(key), last.get(key), value, (*path, key))
        return observed

    def merge_list(
        self, observed: list[Any], last: list[Any], desired: list[Any], path: Path
    ) -> list[Any]:
        key = _list_map_key(observed, last, desired)
        if key is None:
            if _positional(observed, desired):
                return [
                    self.merge_map(o, last[i] if _map_at(last, i) else {}, d, (*path, i))
                    for i, (o, d) in enumerate(zip(observed, desired, strict=True))
                ]
            return json_copy(desired)
        observed_items = {_key_value(item, key): item for item in observed}
        last_items = {_key_value(item, key): item for item in last}
        desired_items = {_key_value(item, key): item for item in desired}
        # The observed order for what is left, then the new items in desired order.
        order = [*observed_items, *desired_items]
        for k in last_items:
            if k not in desired_items:
                observed_items.pop(k, None)
        for k, item in desired_items.items():
            observed_items[k] = self.merge_value(
                observed_items.get(k), last_items.get(k), item, (*path, k)
            )
        result: list[Any] = []
        seen: set[str] = set()
        for k in order:
            if k in observed_items and k not in seen:
                seen.add(k)
                result.append(observed_items[k])
        return result


def _positional(observed: list[Any], desired: list[Any]) -> bool:
    """Lists of maps of one length merge item by item when no key tells items apart."""
    return (
        len(observed) == len(desired) > 0
        and all(isinstance(item, dict) for item in observed)
        and all(isinstance(item, dict) for item in desired)
    )


def _map_at(items: list[Any], index: int) -> bool:
    return index < len(items) and isinstance(items[index], dict)


def _list_map_key(*lists: list[Any]) -> str | None:
    """The merge key when the lists look like one list-map, else None (then desired replaces).

    Every item must be a map; the key is the first conventional key that every item has and
    whose values are unique within each list (a key that does not tell items apart, such as
    `containerPort` for a port opened for both TCP and UDP, is skipped: merging by it would
    lose items).
    """
    items = [item for items in lists for item in items]
    if not items or not all(isinstance(item, dict) for item in items):
        return None
    shared = set(items[0]).intersection(*items[1:])  # the keys every item has
    for key in _LIST_MAP_KEYS:
        if key in shared and all(len(items) < 2 or _unique(items, key) for items in lists):
            return key
    return None


def _unique(items: list[dict[str, Any]], key: str) -> bool:
    values = [_key_value(item, key) for item in items]
    return len(set(values)) == len(values)


def _key_value(item: dict[str, Any], key: str) -> str:
    """A list-map item's key, compared as JSON (so 80 and "80" are different keys)."""
    value = item[key]
    if type(value) is str:
        return encode_basestring_ascii(value)  # what json.dumps does with a string, sooner
    return _compact_json(value)


# --- the unchanged fast path ------------------------------------------------------------


def _plainly_unchanged(observed: Obj, desired: Obj, *, every_field: bool = False) -> bool:
    """True only when `apply(observed, desired)` equals observed; False when unsure (the full
    merge then decides). When observed's last-applied annotation records exactly this desired
    object, the merge removes nothing (last-applied and desired have the same keys at every
    level), so it changes nothing when every desired value is already in observed.
    `every_field`: each of desired's fields must be there, even one the server stores nothing
    for (null, or a built-in kind's empty value)."""
    view = _cleaned_view(desired)
    if view is None:
        return False
    annotations = metadata(observed).get("annotations")
    recorded = annotations.get(LAST_APPLIED_ANNOTATION) if isinstance(annotations, dict) else None
    if not isinstance(recorded, str) or recorded != _compact_json(view):
        return False
    return covers(observed, view, every_field=every_field)


def kept_and_unchanged(observed: Obj, desired: Obj) -> bool:
    """True only when an update would change nothing and the server dropped none of desired's
    fields: observed's last-applied annotation records exactly desired, and observed holds
    every one of its fields (a field the server's schema has no place for could not be
    there). Desired's `status`, which the comparison leaves out, must be absent. Then neither
    the schema's pruning nor the merge need working out: a steady pass's nearly every child."""
    return "status" not in desired and _plainly_unchanged(observed, desired, every_field=True)


def covers(observed: Obj, desired: Obj, *, every_field: bool = False) -> bool:
    """Whether every value of `desired` (already cleaned) is in observed, by meaning: merging it
    in while removing nothing would leave observed as it is. Reads only. `every_field`: a field
    absent from observed is not covered even when the server would store nothing for it."""
    api_version = str(desired.get("apiVersion") or observed.get("apiVersion") or "")
    return _Covered(is_builtin(api_version), every_field).map(observed, desired, ())


def _cleaned_view(desired: Obj) -> Obj | None:
    """What `cleaned` and `drop_last_applied` make of desired, sharing all but the top level
    and metadata with it (read only); None for a Secret with stringData (left to the full
    path)."""
    if fold_string_data(desired) is not desired:
        return None
    view = {key: value for key, value in desired.items() if key != "status"}
    meta = view.get("metadata")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if k not in SERVER_OWNED_METADATA}
        annotations = meta.get("annotations")
        if isinstance(annotations, dict) and LAST_APPLIED_ANNOTATION in annotations:
            meta["annotations"] = {
                k: v for k, v in annotations.items() if k != LAST_APPLIED_ANNOTATION
            }
        view["metadata"] = meta
    return view


_PLAIN_SCALARS: frozenset[type] = frozenset({str, int, float, bool, type(None)})


class _Covered:
    """Whether merging desired into observed (with last-applied equal to desired) leaves
    observed as it is: the same decisions as `_Rules`, without building anything."""

    def __init__(self, builtin: bool, every_field: bool = False) -> None:
        self.builtin = builtin
        self.every_field = every_field

    def value(self, observed: Any, desired: Any, path: Path) -> bool:
        if isinstance(observed, dict) and isinstance(desired, dict):
            return self.map(observed, desired, path)
        if isinstance(observed, list) and isinstance(desired, list):
            return self.list(observed, desired, path)
        scalars = not isinstance(desired, dict | list) and not isinstance(observed, dict | list)
        if scalars and same_scalar(path, observed, desired, builtin=self.builtin):
            return True
        return json_equal(observed, desired)  # desired replaces observed

    def map(self, observed: dict[str, Any], desired: dict[str, Any], path: Path) -> bool:
        for key, value in desired.items():
            if key not in observed:
                if not self.every_field and dropped_by_server(key, value, self.builtin):
                    continue
                return False  # the merge adds it
            current = observed[key]
            if type(current) is type(value) and type(value) in _PLAIN_SCALARS and current == value:
                continue  # the same scalar (of one type, so True is not 1): no path needed
            if not self.value(current, value, (*path, key)):
                return False
        return True

    def list(self, observed: list[Any], desired: list[Any], path: Path) -> bool:
        key = _list_map_key(observed, desired)  # last-applied's list is desired's
        if key is None:
            if _positional(observed, desired):
                return all(
                    self.map(o, d, (*path, i))
                    for i, (o, d) in enumerate(zip(observed, desired, strict=True))
                )
            return json_equal(observed, desired)
        observed_items = {_key_value(item, key): item for item in observed}
        for item in desired:
            k = _key_value(item, key)
            if k not in observed_items or not self.value(observed_items[k], item, (*path, k)):
                return False  # a new item is appended, or an item changes
        return True


# --- cleaning and the annotation -------------------------------------------------------


def cleaned(obj: Obj) -> Obj:
    """A deep copy without the top-level status and without server-owned metadata, in the
    form the server stores (a Secret's stringData folded into data)."""
    obj = fold_string_data(obj)
    result = {key: json_copy(value) for key, value in obj.items() if key != "status"}
    meta = result.get("metadata")
    if isinstance(meta, dict):
        for field in SERVER_OWNED_METADATA:
            meta.pop(field, None)
    return result


def drop_last_applied(obj: Obj) -> None:
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        annotations = meta.get("annotations")
        if isinstance(annotations, dict):
            annotations.pop(LAST_APPLIED_ANNOTATION, None)


def _set_last_applied(obj: Obj, text: str) -> None:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict):
        annotations = meta["annotations"] = {}
    annotations[LAST_APPLIED_ANNOTATION] = text


def _compact_json(value: Any) -> str:
    return _COMPACT.encode(value)


# made once: json.dumps with options makes an encoder per call
_COMPACT = json.JSONEncoder(sort_keys=True, separators=(",", ":"))
