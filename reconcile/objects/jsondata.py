"""Copying and reading JSON data (what API objects and hook answers are): copies several times
faster than `copy.deepcopy`, which matters when every pass copies every child."""

from __future__ import annotations

from typing import Any, TypeVar, cast

_T = TypeVar("_T")


def json_copy(value: _T) -> _T:
    """A deep copy of dicts and lists; other values are shared, which is safe for JSON's
    strings, numbers, booleans and null. (A tuple would come back as a list: JSON has none.)"""
    return cast(_T, _copy(value))


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_copy(item) for item in value]
    return value


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: `True` is not `1`, but `1` is `1.0` (JSON has one number type)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        return False
    return bool(a == b)


def normalized_copy(value: Any) -> Any:
    """A deep copy of JSON-like data, normalised the way a JSON round trip would: tuples become
    lists and mapping keys become strings (YAML may key a mapping by a number, JSON cannot)."""
    if isinstance(value, dict):
        return {_json_key(k): normalized_copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [normalized_copy(v) for v in value]
    return value


def _json_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    return str(key)


def as_dict(value: Any) -> dict[str, Any]:
    """`value` when it is a mapping, else an empty dict (for optional sections like `status`)."""
    return value if isinstance(value, dict) else {}


def string_list(value: Any) -> list[str]:
    """A list of strings from a field that should hold one (anything else counts as empty)."""
    return [str(v) for v in value] if isinstance(value, list) else []
