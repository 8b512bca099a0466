"""The cost of CEL as kube-apiserver counts it: its limits, cel-go's arithmetic on estimates
(unsigned 64-bit, saturating, cost factors rounded up), the words of a refused estimate, and
the runtime cost of one call (cel-go's interpreter/runtimecost.go with Kubernetes' library
CostEstimator.CallCost in front of it).

Limits (k8s.io/apiserver/pkg/apis/cel/config.go, apiextensions' validation.go): a rule's
estimated cost, times the number of times its node can occur, may be at most 10,000,000; a CRD's
rules together at most 100,000,000; one evaluation at most 1,000,000 (PerCallLimit); all the
rules of one object at most 10,000,000 (RuntimeCELCostBudget)."""

from __future__ import annotations

import math
from typing import Any

from celpy import celtypes

PER_CALL_LIMIT = 1_000_000
RUNTIME_BUDGET = 10_000_000
STATIC_RULE_LIMIT = 10_000_000
STATIC_CRD_LIMIT = 100_000_000
MAX_REQUEST_BYTES = 3 * 1024 * 1024
MAX_UINT64 = 2**64 - 1
STRING_TRAVERSAL = 0.1  # common.StringTraversalCostFactor
REGEX_LENGTH = 0.25  # common.RegexStringLengthCostFactor
LIST_CREATE = 10
MAP_CREATE = 30
STRUCT_CREATE = 40
MAX_FORMAT_SIZE = 64
MAX_NAME_FORMAT_REGEX = 128
LIMIT_EXCEEDED = "operation cancelled: actual cost limit exceeded"

Range = tuple[int, int]  # a SizeEstimate or CostEstimate: (min, max)
UNKNOWN: Range = (0, MAX_UINT64)


def add(x: int, y: int) -> int:
    return MAX_UINT64 if x + y > MAX_UINT64 else x + y


def multiply(x: int, y: int) -> int:
    return MAX_UINT64 if x * y > MAX_UINT64 else x * y


def factor(x: int, y: float) -> int:
    """multiplyByCostFactor: x * y rounded up, in float64 as Go computes it."""
    xf = float(x)
    if xf > 0 and y > 0 and xf > float(MAX_UINT64) / y:
        return MAX_UINT64
    product = math.ceil(xf * y)
    return MAX_UINT64 if product >= 2.0**64 else int(product)


def radd(a: Range, b: Range) -> Range:
    return add(a[0], b[0]), add(a[1], b[1])


def rmul(a: Range, b: Range) -> Range:
    return multiply(a[0], b[0]), multiply(a[1], b[1])


def rfactor(a: Range, y: float) -> Range:
    return factor(a[0], y), factor(a[1], y)


def union(a: Range, b: Range) -> Range:
    return min(a[0], b[0]), max(a[1], b[1])


def fixed(n: int) -> Range:
    return n, n


def exceeds_message(what: str, cost: int, limit: int) -> str:
    """getCostErrorMessage: how far past its limit an estimate is."""
    times = float(cost) / float(limit)
    if times > 100.0:
        shown = "more than 100x"
    elif times < 1.5:
        shown = f"{times:f}x"
    else:
        shown = f"{_go_one_decimal(times)}x"
    return (
        f"{what} exceeds budget by factor of {shown} (try simplifying the rule, or adding "
        "maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )


def _go_one_decimal(value: float) -> str:
    """Go's %.1f: rounds half to even on the exact binary value, as Python's format does."""
    return f"{value:.1f}"


# --- runtime ------------------------------------------------------------------------------------


def actual_size(value: Any) -> int:
    """cel-go's actualSize: a string's characters, a byte string's bytes, a list's or map's
    entries, an optional's value's size; 1 for anything else."""
    if isinstance(value, str | bytes | list | dict):
        return len(value)
    optional = _optional_value(value)
    if optional is not None:
        return actual_size(optional)
    return 1


def _optional_value(value: Any) -> Any:
    present = getattr(value, "present", None)
    return getattr(value, "value", None) if present is True else None


def traversal_cost(value: Any) -> int:
    """Kubernetes' traversalCost: a data tree's strings a tenth of their bytes (truncated)."""
    if isinstance(value, str):
        return int(len(value.encode("utf-8", "surrogatepass")) * STRING_TRAVERSAL)
    if isinstance(value, bytes):
        return int(len(value) * STRING_TRAVERSAL)
    if isinstance(value, list):
        return sum(traversal_cost(item) for item in value)
    if isinstance(value, dict):
        return sum(traversal_cost(k) + traversal_cost(v) for k, v in value.items())
    return 1


def _ceil_size(value: Any, times: float = STRING_TRAVERSAL) -> int:
    return math.ceil(actual_size(value) * times)


_NOMINAL = frozenset(
    [
        "masked", "prefixLength", "family", "isUnspecified", "isLoopback",
        "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast", "format.named",
        "sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan",
        "compareTo", "add", "sub", "getScheme", "getHostname", "getHost", "getPort",
        "getEscapedPath", "getQuery",
    ]
)  # fmt: skip


_SETS = {"sets.contains": 1.0, "sets.intersects": 1.0, "sets.equivalent": 2.0}


def call_cost(name: str, args: list[Any], result: Any) -> int:
    """The runtime cost of calling `name` (a member function's receiver first in `args`)."""
    if name in _SETS and len(args) == 2:  # cel-go's ext.Sets tracks its own, first
        return 1 + int(actual_size(args[0]) * actual_size(args[1]) * _SETS[name])
    kubernetes = _kubernetes_call_cost(name, args, result)
    if kubernetes is not None:
        return kubernetes
    return _cel_call_cost(name, args)


def _kubernetes_call_cost(name: str, args: list[Any], result: Any) -> int | None:
    if name in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes"):
        return traversal_cost(args[0]) if args else 0
    if name in ("url", "lowerAscii", "upperAscii", "substring", "trim", "cidr", "isIP"):
        return _ceil_size(args[0]) if args else None
    if name in ("isCIDR", "quantity", "isQuantity", "semver", "isSemver"):
        return _ceil_size(args[0]) if args else None
    if name in ("replace", "split"):
        return _ceil_size(args[0], 2 * STRING_TRAVERSAL) if args else None
    if name == "join":
        return _ceil_size(result, 2 * STRING_TRAVERSAL) if args else None
    if name in ("find", "findAll") and len(args) >= 2:
        text = math.ceil((1.0 + actual_size(args[0])) * STRING_TRAVERSAL)
        return text * _ceil_size(args[1], REGEX_LENGTH)
    if name == "ip" and args:
        return 1 if not isinstance(args[0], str) else _ceil_size(args[0])
    if name == "ip.isCanonical" and args:
        return _ceil_size(args[0], 2 * STRING_TRAVERSAL)
    if name in ("containsIP", "containsCIDR") and len(args) >= 2:
        cidr, other = actual_size(args[0]), actual_size(args[1])
        cost = math.ceil((cidr + cidr) * STRING_TRAVERSAL)
        if name == "containsCIDR":
            cost += math.ceil(cidr * STRING_TRAVERSAL) + 1
        if isinstance(args[1], str):
            cost += math.ceil(other * STRING_TRAVERSAL)
        return cost
    if name == "validate" and len(args) >= 2:
        text = math.ceil((1.0 + actual_size(args[1])) * STRING_TRAVERSAL)
        return text * math.ceil(MAX_NAME_FORMAT_REGEX * REGEX_LENGTH)
    if name in _NOMINAL:
        return 1
    return None


def _cel_call_cost(name: str, args: list[Any]) -> int:
    """cel-go's own costs by overload (told from the arguments), 1 for anything else."""
    if name in _SCALAR_OPERATORS and not isinstance(args[0], str | bytes | list | dict):
        return 1  # numbers, booleans, ...: cel-go charges 1 (an equality, ceil(1 * 0.1))
    if name in ("startsWith", "endsWith") and len(args) == 2:
        return _ceil_size(args[1])
    if name in ("bytes", "string") and len(args) == 1 and isinstance(args[0], str | bytes):
        return _ceil_size(args[0])
    if name in ("strings.quote", "format") and args:
        return _ceil_size(args[0])
    if name == "_in_" and len(args) == 2 and isinstance(args[1], list):
        return actual_size(args[1])
    if name in ("_==_", "_!=_") and len(args) == 2:
        return math.ceil(min(actual_size(args[0]), actual_size(args[1])) * STRING_TRAVERSAL)
    if name in ("_<_", "_<=_", "_>_", "_>=_") and len(args) == 2 and _texts(args):
        return math.ceil(min(actual_size(args[0]), actual_size(args[1])) * STRING_TRAVERSAL)
    if name == "_+_" and len(args) == 2 and _texts(args):
        return math.ceil((actual_size(args[0]) + actual_size(args[1])) * STRING_TRAVERSAL)
    if name == "matches" and len(args) == 2:
        text = math.ceil((1.0 + actual_size(args[0])) * STRING_TRAVERSAL)
        return text * _ceil_size(args[1], REGEX_LENGTH)
    if name == "contains" and len(args) == 2 and _texts(args):
        return _ceil_size(args[0]) * _ceil_size(args[1])
    return 1


_SCALAR_OPERATORS = frozenset(("_+_", "_-_", "_*_", "_/_", "_%_", "_<_", "_<=_", "_>_", "_>=_"))


def _texts(args: list[Any]) -> bool:
    return all(isinstance(a, str) for a in args) or all(
        isinstance(a, bytes) and not isinstance(a, str) for a in args
    )


def is_celpy_value(value: Any) -> bool:
    """A value of the expression (not a namespace or a type used as a function receiver)."""
    return isinstance(value, celtypes.BoolType | celtypes.IntType | str | bytes | list | dict)
