"""CEL's runtime as cel-go runs it, where celpy differs or lacks: equality (across numeric
types, false across other types) and cross-type numeric ordering, index errors, optional values
(`optional.of`, `.orValue`, ...), the namespace values functions dispatch on, the arguments
functions accept, and a bound on what one evaluation may build.

Each function takes and returns celpy values; a `CelError` is an evaluation error in cel-go's
words."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from celpy import celtypes

from reconcile.cluster.memory.cel.errors import CelError, cel_function

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


def is_number(value: Any) -> bool:
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
    if is_number(left) and is_number(right):
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
    if is_number(left) and is_number(right):
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


def ordering(test: Callable[[int], bool]) -> Callable[[Any, Any], Any]:
    @cel_function
    def operator(left: Any, right: Any) -> celtypes.BoolType:
        return celtypes.BoolType(test(compare(left, right)))

    return operator


@cel_function
def equals(left: Any, right: Any) -> celtypes.BoolType:
    return celtypes.BoolType(equal(left, right))


@cel_function
def not_equals(left: Any, right: Any) -> celtypes.BoolType:
    return celtypes.BoolType(not equal(left, right))


@cel_function
def contained_in(item: Any, container: Any) -> celtypes.BoolType:
    if isinstance(container, list):
        return celtypes.BoolType(any(equal(item, x) for x in container))
    if isinstance(container, dict):
        return celtypes.BoolType(_map_key(container, item) is not _MISSING)
    raise TypeError("no such overload")


@cel_function
def index(container: Any, key: Any) -> Any:
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


def optional_of(receiver: Any, *args: Any) -> Any:
    if isinstance(receiver, Namespace) and receiver.name == "optional" and len(args) == 1:
        return Optional(args[0], present=True)
    raise TypeError("no such overload")


def optional_none(receiver: Any) -> Any:
    if isinstance(receiver, Namespace) and receiver.name == "optional":
        return NONE
    raise TypeError("no such overload")


def optional_of_non_zero_value(receiver: Any, value: Any) -> Any:
    if isinstance(receiver, Namespace) and receiver.name == "optional":
        return NONE if _zero(value) else Optional(value, present=True)
    raise TypeError("no such overload")


def has_value(optional: Any) -> celtypes.BoolType:
    if not isinstance(optional, Optional):
        raise TypeError("no such overload")
    return celtypes.BoolType(optional.present)


def optional_value(optional: Any) -> Any:
    if not isinstance(optional, Optional):
        raise TypeError("no such overload")
    if not optional.present:
        raise CelError("optional.none() dereference")
    return optional.value


def or_value(optional: Any, default: Any) -> Any:
    if not isinstance(optional, Optional):
        raise TypeError("no such overload")
    return optional.value if optional.present else default


def optional_or(optional: Any, other: Any) -> Any:
    if not isinstance(optional, Optional) or not isinstance(other, Optional):
        raise TypeError("no such overload")
    return optional if optional.present else other


# --- what evaluations may build, and take --------------------------------------------------------


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


def string_arg(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("no such overload")
    return str(value)


def int_arg(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, celtypes.BoolType | bool):
        raise TypeError("no such overload")
    return int(value)


def list_arg(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError("no such overload")
    return value
