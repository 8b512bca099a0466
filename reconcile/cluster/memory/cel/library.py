"""CEL as kube-apiserver runs it, where celpy differs or lacks: cel-go's runtime equality (across
numeric types, false across other types) and cross-type numeric ordering, its index errors,
optional values, cel-go's string extensions, Kubernetes' list and regex libraries, and sets.

Each function takes and returns celpy values; a `CelError` is an evaluation error in cel-go's
words. Namespaced functions (`optional.of`, `strings.quote`, `sets.contains`) are methods of a
`Namespace` value bound to that name."""

from __future__ import annotations

import functools
import itertools
import math
import unicodedata
from collections.abc import Callable
from typing import Any

import re2  # type: ignore[import-untyped]
from celpy import celtypes

from reconcile.cluster.memory.cel.errors import CelError, cel_function
from reconcile.cluster.memory.golang.regexp import go_error

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class Namespace:
    """The value of `optional`, `strings`, `sets`, `lists`, `format` or `ip` in an expression:
    what its functions dispatch on."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


class Optional:
    """cel-go's `optional_type`."""

    def __init__(self, value: Any = None, *, present: bool) -> None:
        self.value, self.present = value, present

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Optional):
            return False
        if self.present != other.present:
            return False
        return not self.present or equal(self.value, other.value)

    def __hash__(self) -> int:
        return hash(self.present)


NONE = Optional(present=False)

# --- equality and ordering ----------------------------------------------------------------------


def _number(value: Any) -> bool:
    return isinstance(value, celtypes.IntType | celtypes.UintType | celtypes.DoubleType) or (
        isinstance(value, int | float) and not isinstance(value, bool)
    )


def _plain(value: Any) -> int | float:
    return float(value) if isinstance(value, float) else int(value)


def equal(left: Any, right: Any) -> bool:
    """cel-go's runtime `==`: numbers compare by value whatever their type, values of other
    different types are unequal (no error), lists and maps compare element by element."""
    if left is None or right is None:
        return left is None and right is None
    if isinstance(left, celtypes.BoolType) or isinstance(right, celtypes.BoolType):
        return type(left) is type(right) and bool(left) == bool(right)
    if _number(left) and _number(right):
        return _plain(left) == _plain(right)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(
            equal(a, b) for a, b in zip(left, right, strict=True)
        )
    if isinstance(left, dict) and isinstance(right, dict):
        if len(left) != len(right):
            return False
        for key, value in left.items():
            found = _map_key(right, key)
            if found is _MISSING or not equal(value, right[found]):
                return False
        return True
    if isinstance(left, str) and isinstance(right, str):
        return str(left) == str(right)
    if isinstance(left, bytes) and isinstance(right, bytes):
        return bytes(left) == bytes(right)
    if type(left) is not type(right) and not (
        isinstance(left, type(right)) or isinstance(right, type(left))
    ):
        return False
    try:
        return bool(left == right)
    except TypeError:
        return False


_MISSING = object()


def _map_key(mapping: dict[Any, Any], key: Any) -> Any:
    if key in mapping and not isinstance(key, celtypes.BoolType):
        for candidate in mapping:
            if equal(candidate, key):
                return candidate
    for candidate in mapping:
        if equal(candidate, key):
            return candidate
    return _MISSING


def compare(left: Any, right: Any) -> int:
    """cel-go's ordering: numbers across types, otherwise values of one type only."""
    if _number(left) and _number(right):
        a, b = _plain(left), _plain(right)
        return (a > b) - (a < b)
    comparable: tuple[type, ...] = (
        str,
        bytes,
        celtypes.BoolType,
        celtypes.DurationType,
        celtypes.TimestampType,
    )
    for kind in comparable:
        if isinstance(left, kind) and isinstance(right, kind):
            a_value: Any = left
            return int((a_value > right) - (a_value < right))
    ordered = getattr(left, "compare_to", None)
    if ordered is not None and type(left) is type(right):
        result: int = ordered(right)
        return result
    raise TypeError("no such overload")


def _ordering(test: Callable[[int], bool]) -> Callable[[Any, Any], Any]:
    @cel_function
    def operator(left: Any, right: Any) -> celtypes.BoolType:
        return celtypes.BoolType(test(compare(left, right)))

    return operator


@cel_function
def _equals(left: Any, right: Any) -> celtypes.BoolType:
    return celtypes.BoolType(equal(left, right))


@cel_function
def _not_equals(left: Any, right: Any) -> celtypes.BoolType:
    return celtypes.BoolType(not equal(left, right))


@cel_function
def _in(item: Any, container: Any) -> celtypes.BoolType:
    if isinstance(container, list):
        return celtypes.BoolType(any(equal(item, x) for x in container))
    if isinstance(container, dict):
        return celtypes.BoolType(_map_key(container, item) is not _MISSING)
    raise TypeError("no such overload")


@cel_function
def _index(container: Any, key: Any) -> Any:
    if isinstance(container, list):
        if isinstance(key, celtypes.DoubleType) and float(key).is_integer():
            key = int(key)
        if not isinstance(key, int) or isinstance(key, celtypes.BoolType):
            raise TypeError("no such overload")
        if not 0 <= int(key) < len(container):
            raise CelError(f"index out of bounds: {int(key)}")
        return container[int(key)]
    if isinstance(container, dict):
        found = _map_key(container, key)
        if found is _MISSING:
            raise CelError(f"no such key: {key}")
        return container[found]
    raise TypeError("no such overload")


# --- optional values ----------------------------------------------------------------------------


def _zero(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, celtypes.DurationType):
        return value.total_seconds() == 0
    if isinstance(value, celtypes.TimestampType):
        return value.timestamp() == 0
    return not bool(value) if isinstance(value, str | bytes | list | dict | int | float) else False


def _of(receiver: Any, *args: Any) -> Any:
    if isinstance(receiver, Namespace) and receiver.name == "optional" and len(args) == 1:
        return Optional(args[0], present=True)
    raise TypeError("no such overload")


def _none(receiver: Any) -> Any:
    if isinstance(receiver, Namespace) and receiver.name == "optional":
        return NONE
    raise TypeError("no such overload")


def _of_non_zero_value(receiver: Any, value: Any) -> Any:
    if isinstance(receiver, Namespace) and receiver.name == "optional":
        return NONE if _zero(value) else Optional(value, present=True)
    raise TypeError("no such overload")


def _has_value(optional: Any) -> celtypes.BoolType:
    if not isinstance(optional, Optional):
        raise TypeError("no such overload")
    return celtypes.BoolType(optional.present)


def _value(optional: Any) -> Any:
    if not isinstance(optional, Optional):
        raise TypeError("no such overload")
    if not optional.present:
        raise CelError("optional.none() dereference")
    return optional.value


def _or_value(optional: Any, default: Any) -> Any:
    if not isinstance(optional, Optional):
        raise TypeError("no such overload")
    return optional.value if optional.present else default


def _or(optional: Any, other: Any) -> Any:
    if not isinstance(optional, Optional) or not isinstance(other, Optional):
        raise TypeError("no such overload")
    return optional if optional.present else other


# --- strings (cel-go ext.Strings) ---------------------------------------------------------------


def _string_arg(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("no such overload")
    return str(value)


def _int_arg(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, celtypes.BoolType | bool):
        raise TypeError("no such overload")
    return int(value)


def _char_at(text: Any, index: Any) -> celtypes.StringType:
    text, i = _string_arg(text), _int_arg(index)
    if i < 0 or i > len(text):
        raise CelError(f"index out of range: {i}")
    return celtypes.StringType(text[i : i + 1])


def _index_of(target: Any, item: Any, *start: Any) -> celtypes.IntType:
    if isinstance(target, list):
        return _list_index_of(target, item)
    text, sub = _string_arg(target), _string_arg(item)
    offset = _int_arg(start[0]) if start else 0
    if offset < 0 or offset > len(text):
        raise CelError(f"index out of range: {offset}")
    return celtypes.IntType(text.find(sub, offset))


def _last_index_of(target: Any, item: Any, *start: Any) -> celtypes.IntType:
    if isinstance(target, list):
        return _list_last_index_of(target, item)
    text, sub = _string_arg(target), _string_arg(item)
    offset = _int_arg(start[0]) if start else len(text)
    if offset < 0 or offset > len(text):
        raise CelError(f"index out of range: {offset}")
    return celtypes.IntType(text.rfind(sub, 0, offset + len(sub)))


def _ascii_case(convert: Callable[[str], str]) -> Callable[[Any], celtypes.StringType]:
    def change(text: Any) -> celtypes.StringType:
        value = _string_arg(text)
        return celtypes.StringType("".join(convert(c) if c.isascii() else c for c in value))

    return change


def _replace(text: Any, old: Any, new: Any, *limit: Any) -> celtypes.StringType:
    count = _int_arg(limit[0]) if limit else -1
    value, before, after = _string_arg(text), _string_arg(old), _string_arg(new)
    found = value.count(before) if before else len(value) + 1
    if count >= 0:
        found = min(found, count)
    check_produced(len(value) + found * (len(after) - len(before)))  # before it is built
    return celtypes.StringType(value.replace(before, after, count if count >= 0 else -1))


# What one evaluation may build (strings' characters, lists' and maps' entries): kube-apiserver
# sets no bound but the cost, and a replace or a format can make far more than it costs; here a
# rule that would build more than this fails instead of exhausting the run's memory.
MAX_PRODUCED = 64 * 1024 * 1024


class ProducedTooMuch(CelError):
    """An evaluation built more than MAX_PRODUCED."""


def check_produced(size: int) -> None:
    if size > MAX_PRODUCED:
        raise ProducedTooMuch(
            f"--local stops a rule that builds more than {MAX_PRODUCED} characters or elements "
            "in one evaluation (the API server sets no such bound)"
        )


def _split(text: Any, separator: Any, *limit: Any) -> celtypes.ListType:
    value, sep = _string_arg(text), _string_arg(separator)
    count = _int_arg(limit[0]) if limit else -1
    if count == 0:
        return celtypes.ListType()
    if sep == "":
        parts = list(value)
        if count > 0 and len(parts) > count:
            parts = [*parts[: count - 1], "".join(parts[count - 1 :])]
    else:
        parts = value.split(sep, count - 1 if count > 0 else -1)
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def _substring(text: Any, start: Any, *end: Any) -> celtypes.StringType:
    value = _string_arg(text)
    begin = _int_arg(start)
    finish = _int_arg(end[0]) if end else len(value)
    if begin < 0 or begin > len(value):
        raise CelError(f"index out of range: {begin}")
    if finish < 0 or finish > len(value):
        raise CelError(f"index out of range: {finish}")
    if begin > finish:
        raise CelError(f"invalid substring range. start: {begin}, end: {finish}")
    return celtypes.StringType(value[begin:finish])


def _is_space(character: str) -> bool:
    # Go's unicode.IsSpace: zero-width spaces are not whitespace
    return character.isspace() or unicodedata.category(character) == "Zs"


def _trim(text: Any) -> celtypes.StringType:
    value = _string_arg(text)
    start, end = 0, len(value)
    while start < end and _is_space(value[start]):
        start += 1
    while end > start and _is_space(value[end - 1]):
        end -= 1
    return celtypes.StringType(value[start:end])


def _join(items: Any, *separator: Any) -> celtypes.StringType:
    if not isinstance(items, list):
        raise TypeError("no such overload")
    sep = _string_arg(separator[0]) if separator else ""
    return celtypes.StringType(sep.join(_string_arg(item) for item in items))


def quote(text: str) -> str:
    escapes = {
        "\a": "\\a",
        "\b": "\\b",
        "\f": "\\f",
        "\n": "\\n",
        "\r": "\\r",
        "\t": "\\t",
        "\v": "\\v",
        "\\": "\\\\",
        '"': '\\"',
    }
    return '"' + "".join(escapes.get(c, c) for c in text) + '"'


def _quote(receiver: Any, text: Any) -> celtypes.StringType:
    if not (isinstance(receiver, Namespace) and receiver.name == "strings"):
        raise TypeError("no such overload")
    return celtypes.StringType(quote(_string_arg(text)))


def _format_value(clause: str, precision: int | None, value: Any) -> str:
    if clause == "s":
        return _as_string(value)
    if clause == "d":
        if not _number(value) or isinstance(value, celtypes.DoubleType):
            raise CelError("error during formatting: decimal clause can only be used on integers")
        return str(int(value))
    if clause in "fe":
        if not _number(value):
            raise CelError(
                "error during formatting: fixed-point clause can only be used on doubles"
                if clause == "f"
                else "error during formatting: scientific clause can only be used on doubles"
            )
        digits = 6 if precision is None else precision
        if _too_large_for_go(digits):  # Go's fmt reads no such precision: what it prints
            return f"%!(NOVERB)%!(EXTRA float64={double_text(float(value))})"
        if clause == "f":
            return f"{float(value):.{digits}f}"
        mantissa, _, exponent = f"{float(value):.{digits}e}".partition("e")
        superscript = str.maketrans("0123456789+-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻")
        sign = "" if exponent.startswith("+") else "-"
        # cel-go's locale-aware scientific notation
        return f"{mantissa}×10{(sign + exponent[1:]).translate(superscript)}"  # noqa: RUF001
    if clause in "boxX":
        if isinstance(value, str | bytes) and clause in "xX":
            raw = value.encode() if isinstance(value, str) else bytes(value)
            text = raw.hex()
            return text.upper() if clause == "X" else text
        if not isinstance(value, int) or isinstance(value, celtypes.BoolType):
            base = {"b": "binary", "o": "octal"}.get(clause, "hex")
            also = " and bools" if clause == "b" else ""
            raise CelError(
                f"error during formatting: only integers{also} can be formatted as {base}"
            )
        spec = {"b": "b", "o": "o", "x": "x", "X": "X"}[clause]
        return format(int(value), spec)
    raise CelError(f'could not parse formatting clause: unrecognized formatting clause "{clause}"')


def _too_large_for_go(precision: int) -> bool:
    """fmt's parsenum: it gives up on a number once it is past a million, before a digit."""
    number = 0
    for digit in str(precision):
        if number > 1_000_000:
            return True
        number = number * 10 + int(digit)
    return False


def _as_string(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, celtypes.BoolType):
        return "true" if value else "false"
    if isinstance(value, celtypes.DurationType):
        return duration_text(value)
    if isinstance(value, celtypes.TimestampType):
        return str(value)
    if isinstance(value, celtypes.DoubleType):
        return double_text(float(value))
    if isinstance(value, list):
        return "[" + ", ".join(_as_string(item) for item in value) + "]"
    if isinstance(value, dict):
        pairs = sorted((_as_string(k), _as_string(v)) for k, v in value.items())
        return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    if isinstance(value, bytes):
        return bytes(value).decode(errors="replace")
    return str(value)


def double_text(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


def duration_text(value: celtypes.DurationType) -> str:
    seconds = value.total_seconds()
    return (str(int(seconds)) if seconds.is_integer() else repr(seconds)) + "s"


def _format(text: Any, args: Any) -> celtypes.StringType:
    template = _string_arg(text)
    if not isinstance(args, list):
        raise TypeError("no such overload")
    out: list[str] = []
    i, used = 0, 0
    while i < len(template):
        char = template[i]
        if char != "%":
            out.append(char)
            i += 1
            continue
        i += 1
        if i < len(template) and template[i] == "%":
            out.append("%")
            i += 1
            continue
        precision: int | None = None
        if i < len(template) and template[i] == ".":
            j = i + 1
            while j < len(template) and template[j] in "0123456789":
                j += 1
            precision = int(template[i + 1 : j] or 0)
            i = j
        if i >= len(template):
            raise CelError("could not parse formatting clause: unexpected end of string")
        if used >= len(args):
            raise CelError(f"index {used} out of range")
        out.append(_format_value(template[i], precision, args[used]))
        used += 1
        i += 1
    return celtypes.StringType("".join(out))


# --- lists (Kubernetes' library.Lists) ----------------------------------------------------------


def _list_arg(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError("no such overload")
    return value


def _is_sorted(items: Any) -> celtypes.BoolType:
    values = _list_arg(items)
    return celtypes.BoolType(all(compare(a, b) <= 0 for a, b in itertools.pairwise(values)))


def _sum(items: Any) -> Any:
    values = _list_arg(items)
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
        values = _list_arg(items)
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


# --- regex (Kubernetes' library.Regex) ----------------------------------------------------------


def compile_regex(pattern: Any) -> Any:
    return _compiled(_string_arg(pattern))


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> Any:
    options = re2.Options()
    options.log_errors = False  # the error is the rule's, not absl's to print
    try:
        return re2.compile(pattern, options=options)
    except re2.error as error:
        raise CelError(go_error(error)) from error


def _find(text: Any, pattern: Any) -> celtypes.StringType:
    match = compile_regex(pattern).search(_string_arg(text))
    return celtypes.StringType(match.group(0) if match else "")


def _find_all(text: Any, pattern: Any, *limit: Any) -> celtypes.ListType:
    count = _int_arg(limit[0]) if limit else -1
    if count == 0:
        return celtypes.ListType()
    found = [m.group(0) for m in compile_regex(pattern).finditer(_string_arg(text))]
    if count > 0:
        found = found[:count]
    return celtypes.ListType([celtypes.StringType(s) for s in found])


@cel_function
def _matches(text: Any, pattern: Any) -> celtypes.BoolType:
    return celtypes.BoolType(compile_regex(pattern).search(_string_arg(text)) is not None)


# --- sets (cel-go ext.Sets) ---------------------------------------------------------------------


def _sets_call(name: str, receiver: Any, args: tuple[Any, ...]) -> celtypes.BoolType:
    if not isinstance(receiver, Namespace) or receiver.name != "sets" or len(args) != 2:
        raise TypeError("no such overload")
    first, second = _list_arg(args[0]), _list_arg(args[1])

    def contains(a: list[Any], b: list[Any]) -> bool:
        return all(any(equal(x, y) for y in a) for x in b)

    if name == "contains":
        return celtypes.BoolType(contains(first, second))
    if name == "equivalent":
        return celtypes.BoolType(contains(first, second) and contains(second, first))
    return celtypes.BoolType(any(any(equal(x, y) for y in second) for x in first))


# --- dispatch -----------------------------------------------------------------------------------

_upper = _ascii_case(str.upper)
_lower = _ascii_case(str.lower)


def _contains(target: Any, *args: Any) -> Any:
    if isinstance(target, Namespace):
        return _sets_call("contains", target, args)
    if isinstance(target, str) and len(args) == 1:
        return celtypes.BoolType(_string_arg(args[0]) in str(target))
    raise TypeError("no such overload")


def functions() -> dict[str, Callable[..., Any]]:
    """The functions this module adds to (or replaces in) celpy's, by name."""
    plain: dict[str, Callable[..., Any]] = {
        "of": _of,
        "none": _none,
        "ofNonZeroValue": _of_non_zero_value,
        "hasValue": _has_value,
        "value": _value,
        "orValue": _or_value,
        "or": _or,
        "charAt": _char_at,
        "indexOf": _index_of,
        "lastIndexOf": _last_index_of,
        "lowerAscii": _lower,
        "upperAscii": _upper,
        "replace": _replace,
        "split": _split,
        "substring": _substring,
        "trim": _trim,
        "join": _join,
        "quote": _quote,
        "format": _format,
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
            "_==_": _equals,
            "_!=_": _not_equals,
            "_<_": _ordering(lambda c: c < 0),
            "_<=_": _ordering(lambda c: c <= 0),
            "_>_": _ordering(lambda c: c > 0),
            "_>=_": _ordering(lambda c: c >= 0),
            "_in_": _in,
            "_[_]": _index,
            "matches": _matches,
        }
    )
    return wrapped


NAMESPACES = ("optional", "strings", "sets", "lists", "format", "ip")
