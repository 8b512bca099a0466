"""CEL's functions as kube-apiserver's environment has them, where celpy differs or lacks, by
name (`functions`): cel-go's runtime operators and optional values (`runtime`), its string
extensions (`strings`), Kubernetes' list and regex libraries, and cel-go's sets.

Each function takes and returns celpy values; a `CelError` is an evaluation error in cel-go's
words. Namespaced functions (`optional.of`, `strings.quote`, `sets.contains`) are methods of a
`Namespace` value bound to that name."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

import re2  # type: ignore[import-untyped]
from celpy import celtypes

from reconcile.cluster.memory.cel import runtime, strings
from reconcile.cluster.memory.cel.errors import CelError, cel_function
from reconcile.cluster.memory.cel.runtime import (
    INT64_MAX,
    INT64_MIN,
    Namespace,
    compare,
    equal,
    int_arg,
    list_arg,
    string_arg,
)
from reconcile.cluster.memory.golang.regexp import go_error

# --- lists (Kubernetes' library.Lists) ----------------------------------------------------------


def _is_sorted(items: Any) -> celtypes.BoolType:
    values = list_arg(items)
    return celtypes.BoolType(all(compare(a, b) <= 0 for a, b in itertools.pairwise(values)))


def _sum(items: Any) -> Any:
    values = list_arg(items)
    if not values:
        return celtypes.IntType(0)
    total = values[0]
    for item in values[1:]:
        total = total + item
    if isinstance(total, celtypes.IntType) and not INT64_MIN <= int(total) <= INT64_MAX:
        raise CelError("integer overflow")
    return total


def _extreme(name: str, pick: Callable[[int], bool]) -> Callable[[Any], Any]:
    def extreme(items: Any) -> Any:
        values = list_arg(items)
        if not values:
            raise CelError(f"{name} called on empty list")
        best = values[0]
        for item in values[1:]:
            if pick(compare(item, best)):
                best = item
        return best

    return extreme


def _list_index_of(items: list[Any], item: Any) -> celtypes.IntType:
    for i, candidate in enumerate(items):
        if equal(candidate, item):
            return celtypes.IntType(i)
    return celtypes.IntType(-1)


def _list_last_index_of(items: list[Any], item: Any) -> celtypes.IntType:
    for i in range(len(items) - 1, -1, -1):
        if equal(items[i], item):
            return celtypes.IntType(i)
    return celtypes.IntType(-1)


def compile_regex(pattern: Any) -> Any:
    return _compiled(string_arg(pattern))


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> Any:
    options = re2.Options()
    options.log_errors = False  # the error is the rule's, not absl's to print
    try:
        return re2.compile(pattern, options=options)
    except re2.error as error:
        raise CelError(go_error(error)) from error


def _find(text: Any, pattern: Any) -> celtypes.StringType:
    match = compile_regex(pattern).search(string_arg(text))
    return celtypes.StringType(match.group(0) if match else "")


def _find_all(text: Any, pattern: Any, *limit: Any) -> celtypes.ListType:
    count = int_arg(limit[0]) if limit else -1
    if count == 0:
        return celtypes.ListType()
    found = [m.group(0) for m in compile_regex(pattern).finditer(string_arg(text))]
    if count > 0:
        found = found[:count]
    return celtypes.ListType([celtypes.StringType(s) for s in found])


@cel_function
def _matches(text: Any, pattern: Any) -> celtypes.BoolType:
    return celtypes.BoolType(compile_regex(pattern).search(string_arg(text)) is not None)


def _sets_call(name: str, receiver: Any, args: tuple[Any, ...]) -> celtypes.BoolType:
    if not isinstance(receiver, Namespace) or receiver.name != "sets" or len(args) != 2:
        raise TypeError("no such overload")
    first, second = list_arg(args[0]), list_arg(args[1])

    def contains(a: list[Any], b: list[Any]) -> bool:
        return all(any(equal(x, y) for y in a) for x in b)

    if name == "contains":
        return celtypes.BoolType(contains(first, second))
    if name == "equivalent":
        return celtypes.BoolType(contains(first, second) and contains(second, first))
    return celtypes.BoolType(any(any(equal(x, y) for y in second) for x in first))


_upper = strings.ascii_case(str.upper)

_lower = strings.ascii_case(str.lower)


def _index_of(target: Any, item: Any, *start: Any) -> celtypes.IntType:
    if isinstance(target, list):
        return _list_index_of(target, item)
    return strings.string_index_of(target, item, *start)


def _last_index_of(target: Any, item: Any, *start: Any) -> celtypes.IntType:
    if isinstance(target, list):
        return _list_last_index_of(target, item)
    return strings.string_last_index_of(target, item, *start)


def _contains(target: Any, *args: Any) -> Any:
    if isinstance(target, Namespace):
        return _sets_call("contains", target, args)
    if isinstance(target, str) and len(args) == 1:
        return celtypes.BoolType(string_arg(args[0]) in str(target))
    raise TypeError("no such overload")


def functions() -> dict[str, Callable[..., Any]]:
    """The functions this module adds to (or replaces in) celpy's, by name."""
    plain: dict[str, Callable[..., Any]] = {
        "of": runtime.optional_of,
        "none": runtime.optional_none,
        "ofNonZeroValue": runtime.optional_of_non_zero_value,
        "hasValue": runtime.has_value,
        "value": runtime.optional_value,
        "orValue": runtime.or_value,
        "or": runtime.optional_or,
        "charAt": strings.char_at,
        "indexOf": _index_of,
        "lastIndexOf": _last_index_of,
        "lowerAscii": _lower,
        "upperAscii": _upper,
        "replace": strings.replace,
        "split": strings.split,
        "substring": strings.substring,
        "trim": strings.trim,
        "join": strings.join,
        "quote": strings.strings_quote,
        "format": strings.format_string,
        "isSorted": _is_sorted,
        "sum": _sum,
        "min": _extreme("min", lambda c: c < 0),
        "max": _extreme("max", lambda c: c > 0),
        "find": _find,
        "findAll": _find_all,
        "contains": _contains,
        "equivalent": lambda ns, *args: _sets_call("equivalent", ns, args),
        "intersects": lambda ns, *args: _sets_call("intersects", ns, args),
    }
    wrapped = {name: cel_function(function) for name, function in plain.items()}
    wrapped.update(
        {
            "_==_": runtime.equals,
            "_!=_": runtime.not_equals,
            "_<_": runtime.ordering(lambda c: c < 0),
            "_<=_": runtime.ordering(lambda c: c <= 0),
            "_>_": runtime.ordering(lambda c: c > 0),
            "_>=_": runtime.ordering(lambda c: c >= 0),
            "_in_": runtime.contained_in,
            "_[_]": runtime.index,
            "matches": _matches,
        }
    )
    return wrapped


NAMESPACES = ("optional", "strings", "sets", "lists", "format", "ip")
