"""The estimated cost of one call, as cel-go's coster.functionCost decides it: Kubernetes'
CostEstimator.EstimateCallCost first (by function name: the list, string, regex, URL, IP, CIDR,
quantity and format libraries), then cel-go's own estimates by overload (told here from the
argument types: string or list concatenation, comparisons, `in`, `matches`, `contains`, ...),
and 1 for any other call. The cost returned excludes the arguments' own, which the caller adds.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import lark
from celpy.evaluation import celbytes, celstr

from reconcile.cluster.memory.cel import cost as c
from reconcile.cluster.memory.cel.decltypes import BOOL, STRING, Decl

if TYPE_CHECKING:
    from reconcile.cluster.memory.cel.estimate import Est, Estimator

Range = c.Range


def _names(text: str) -> list[str]:
    return text.split()


Result = tuple[Range | None, Range | None, Decl | None, tuple[str, ...] | None, Range | None]
_ONE: Range = (1, 1)
_LIST_FUNCTIONS = frozenset(("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes"))
_NOMINAL = frozenset(
    _names(
        "masked prefixLength family isUnspecified isLoopback isLinkLocalMulticast "
        "isLinkLocalUnicast isGlobalUnicast format.named sign asInteger isInteger "
        "asApproximateFloat isGreaterThan isLessThan compareTo add sub getScheme getHostname "
        "getHost getPort getEscapedPath getQuery"
    )
)
_TEXT = ("string", "bytes")
_SETS = {"sets.contains": 1.0, "sets.intersects": 1.0, "sets.equivalent": 2.0}


def string_literal_length(text: str) -> int:
    """The characters of a string literal's value (its escapes read)."""
    try:
        return len(str(celstr(lark.Token("STRING_LIT", text))))
    except Exception:  # a literal celpy cannot read fails elsewhere, when it is evaluated
        return len(text)


def bytes_literal_length(text: str) -> int:
    try:
        return len(bytes(celbytes(lark.Token("BYTES_LIT", text))))
    except Exception:
        return len(text)


def call_estimate(estimator: Estimator, name: str, target: Est | None, args: list[Est]) -> Result:
    from reconcile.cluster.memory.cel.estimate import _RESULTS

    decl = _result_type(name, target, args) or _RESULTS.get(name)
    if name in _SETS and len(args) == 2:  # cel-go's ext.Sets estimates its own, first
        pair = c.rmul(_size(estimator, args[0]), _size(estimator, args[1]))
        return c.radd(c.rfactor(pair, _SETS[name]), _ONE), None, decl, None, None
    found = _kubernetes(estimator, name, target, args)
    if found is not None:
        return found[0], found[1], decl, None, None
    return _cel(estimator, name, target, args, decl)


def _result_type(name: str, target: Est | None, args: list[Est]) -> Decl | None:
    receiver = target.decl if target is not None else (args[0].decl if args else None)
    if name in ("sum", "min", "max") and receiver is not None and receiver.kind == "list":
        return receiver.elem
    if name == "_[_]" and receiver is not None and receiver.kind in ("list", "map"):
        return receiver.elem
    if name in ("_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_", "_in_", "!_"):
        return BOOL
    if name == "_+_" and args and args[0].decl is not None and args[0].decl.kind in (
        "string", "bytes", "list",
    ):  # fmt: skip
        return args[0].decl
    if name in ("_+_", "_-_", "_*_", "_/_", "_%_", "-_") and args:
        kinds = {a.decl.kind for a in args if a.decl is not None}
        if len(kinds) == 1 and len(args) == len([a for a in args if a.decl is not None]):
            return args[0].decl
    return None


def _size(estimator: Estimator, node: Est | None) -> Range:
    """Kubernetes' sizeEstimate: the computed size, else the schema's, else unknown."""
    if node is None:
        return c.UNKNOWN
    return estimator.size_of(node) or estimator.path_size(node.path) or c.UNKNOWN


def _kubernetes(
    estimator: Estimator, name: str, target: Est | None, args: list[Est]
) -> tuple[Range, Range | None] | None:
    """EstimateCallCost: (cost, result size), or None where it gives no estimate."""
    size = _size
    if name in _LIST_FUNCTIONS and target is not None:
        element_cost = _ONE
        decl = target.decl
        if decl is not None and decl.kind in ("list", "map") and decl.elem is not None:
            element = decl.elem if decl.kind == "list" else decl.key or STRING
            if element.kind in _TEXT:
                path = (*target.path, "@items") if target.path else None
                from reconcile.cluster.memory.cel.estimate import Est

                node = Est((0, 0), element, path)
                element_cost = c.radd(element_cost, c.rfactor(size(estimator, node), 0.1))
            return c.rmul(size(estimator, target), element_cost), None
        if name == "includes":
            return c.rmul(size(estimator, target), element_cost), None
        return c.rfactor(size(estimator, target), c.STRING_TRAVERSAL), None
    if name in ("url", "jsonpatch.escapeKey") and len(args) == 1:
        found = size(estimator, args[0])
        return c.rfactor(found, c.STRING_TRAVERSAL), found
    if name in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
        found = size(estimator, target)
        return c.rfactor(found, c.STRING_TRAVERSAL), found
    if name == "replace" and target is not None and len(args) >= 2:
        return _replace(size(estimator, target), size(estimator, args[0]), size(estimator, args[1]))
    if name == "split" and target is not None:
        found = size(estimator, target)
        largest = found[1]
        if len(args) > 1 and args[1].size is not None and args[1].decl is not None:
            largest = args[1].size[1] if args[1].decl.kind == "int" else largest
        return c.rfactor(found, 2 * c.STRING_TRAVERSAL), (0, largest)
    if name == "join" and target is not None:
        return _join(estimator, target, args)
    if name in ("find", "findAll") and target is not None and args:
        found = size(estimator, target)
        text = c.rfactor(c.radd(found, _ONE), c.STRING_TRAVERSAL)
        regex = c.rfactor(size(estimator, args[0]), c.REGEX_LENGTH)
        return c.rmul(text, regex), (0, found[1])
    if name in ("cidr", "isIP", "isCIDR", "quantity", "isQuantity", "semver", "isSemver") and args:
        return c.rfactor(size(estimator, args[0]), c.STRING_TRAVERSAL), None
    if name == "ip":
        if target is not None:
            return _ONE, None  # cidr.ip()
        if args:
            return c.rfactor(size(estimator, args[0]), c.STRING_TRAVERSAL), None
    if name == "ip.isCanonical" and args:
        return c.rfactor(size(estimator, args[0]), 2 * c.STRING_TRAVERSAL), None
    if name in ("containsIP", "containsCIDR") and args:
        compared: Range = (4, 16)
        cost = c.rfactor(c.radd(compared, compared), c.STRING_TRAVERSAL)
        if name == "containsCIDR":
            cost = c.radd(c.radd(cost, c.rfactor(compared, c.STRING_TRAVERSAL)), _ONE)
        if args[0].decl is not None and args[0].decl.kind == "string":
            cost = c.radd(cost, c.rfactor(size(estimator, args[0]), c.STRING_TRAVERSAL))
        return cost, None
    if name == "validate" and args:
        traversal = c.rfactor(size(estimator, args[0]), c.STRING_TRAVERSAL)
        return c.rfactor(traversal, c.MAX_NAME_FORMAT_REGEX * c.REGEX_LENGTH), None
    if name in _NOMINAL:
        return _ONE, None
    if name == "_==_" and len(args) == 2:
        return _kubernetes_equality(estimator, args)
    return None


def _kubernetes_equality(estimator: Estimator, args: list[Est]) -> tuple[Range, None] | None:
    """Equality of two values of one of Kubernetes' own types."""
    left, right = args[0].decl, args[1].decl
    if left is None or right is None or left.kind != right.kind:
        return None
    if left.kind in ("ip", "cidr", "quantity", "semver"):
        return _ONE, None
    if left.kind == "format":
        return c.rfactor((1, c.MAX_FORMAT_SIZE), c.STRING_TRAVERSAL), None
    if left.kind == "url":
        # (the estimator reads the right-hand side's size for both sides)
        found = estimator.size_of(args[1]) or _ONE
        return c.rfactor((1, found[1]), c.STRING_TRAVERSAL), None
    return None


def _replace(whole: Range, old: Range, new: Range) -> tuple[Range, Range]:
    count_min = count_max = retained_min = retained_max = 0
    if old[0] == 0:
        count_max = whole[1] + 1 if whole[1] < c.MAX_UINT64 else whole[1]
        retained_max = whole[1]
    elif new[1] <= old[0]:
        retained_max = whole[1]
    else:
        count_max = math.ceil(float(whole[1]) / float(old[0]))
    if old[1] == 0:
        count_min = whole[0] + 1 if whole[0] < c.MAX_UINT64 else whole[0]
        retained_min = whole[0]
    elif old[1] <= new[0]:
        retained_min = whole[0]
    else:
        count_min = math.ceil(float(whole[0]) / float(old[1]))
    result = c.radd(c.rmul((count_min, count_max), new), (retained_min, retained_max))
    return c.rfactor(whole, 2 * c.STRING_TRAVERSAL), result


def _join(estimator: Estimator, target: Est, args: list[Est]) -> tuple[Range, Range]:
    listed = _size(estimator, target)
    total: Range = (0, 0)
    decl = target.decl
    if decl is not None and decl.kind in ("list", "map") and decl.elem is not None:
        from reconcile.cluster.memory.cel.estimate import Est

        path = (*target.path, "@items") if target.path else None
        total = c.rmul(listed, _size(estimator, Est((0, 0), decl.elem, path)))
    if args:
        separators = (max(listed[0] - 1, 0), max(listed[1] - 1, 0))
        total = c.radd(total, c.rmul(_size(estimator, args[0]), separators))
    return c.rfactor(total, c.STRING_TRAVERSAL), total


def _cel(
    estimator: Estimator, name: str, target: Est | None, args: list[Est], decl: Decl | None
) -> Result:
    """cel-go's own estimates, by the overload the argument types select."""
    size = estimator.size_or_unknown
    kinds = [a.decl.kind if a.decl is not None else "dyn" for a in args]
    if name == "format" and target is not None:
        return c.rfactor(size(target), c.STRING_TRAVERSAL), None, decl, None, None
    if name in ("bytes", "string") and len(args) == 1 and kinds[0] in ("string", "bytes", "dyn"):
        found = size(args[0])
        if name == "bytes":
            result: Range = (found[0], c.multiply(found[1], 4))
        else:
            result = (found[0] // 4, found[1])
        estimate = c.rfactor(found, c.STRING_TRAVERSAL)
        if kinds[0] == "dyn":  # every overload of the conversion applies: their union
            estimate = c.union(estimate, _ONE)
        return estimate, result, decl, None, None
    if name == "strings.quote" and len(args) == 1:
        found = size(args[0])
        result = (c.add(found[0], 2), c.add(c.multiply(found[1], 2), 2))
        return c.rfactor(found, c.STRING_TRAVERSAL), result, decl, None, None
    if name in ("startsWith", "endsWith") and len(args) == 1:
        return c.rfactor(size(args[0]), c.STRING_TRAVERSAL), None, decl, None, None
    if name == "_in_" and len(args) == 2:
        return _membership(size, args[1]), None, decl, None, None
    if name == "matches":
        texts = [target, *args] if target is not None else args
        if len(texts) == 2:
            text = c.rfactor(c.radd(size(texts[0]), _ONE), c.STRING_TRAVERSAL)
            regex = c.rfactor(size(texts[1]), c.REGEX_LENGTH)
            return c.rmul(text, regex), None, decl, None, None
    if name == "contains" and target is not None and len(args) == 1:
        whole = c.rfactor(size(target), c.STRING_TRAVERSAL)
        return c.rmul(whole, c.rfactor(size(args[0]), c.STRING_TRAVERSAL)), None, decl, None, None
    if name == "_+_" and len(args) == 2:
        return _concatenation(size, args, kinds, decl)
    if name in ("_==_", "_!=_") or (
        name in ("_<_", "_<=_", "_>_", "_>=_") and {"string", "bytes"} & set(kinds)
    ):
        return _comparison(size, args), None, decl, None, None
    if name in ("_<_", "_<=_", "_>_", "_>=_") and "dyn" in kinds:
        # the strings' and bytes' overloads among those a dyn operand may select
        return c.union(_ONE, _comparison(size, args)), None, decl, None, None
    if name == "_[_]" and len(args) == 2:
        receiver = args[0]
        step = "@items" if receiver.decl is not None and receiver.decl.kind == "list" else "@values"
        path = (*(receiver.path or ()), step)
        return _ONE, receiver.entry, decl, path, None
    return _ONE, None, decl, None, None


def _membership(size: Callable[[Est], Range], container: Est) -> Range:
    kind = container.decl.kind if container.decl is not None else "dyn"
    listed = size(container)
    if kind == "list":
        return listed
    if kind == "dyn":
        return c.union(listed, _ONE)
    return _ONE


def _comparison(size: Callable[[Est], Range], args: list[Est]) -> Range:
    left, right = size(args[0]), size(args[1])
    smallest = min(left[1], right[1])
    return c.rfactor((1 if smallest > 0 else 0, smallest), c.STRING_TRAVERSAL)


def _concatenation(
    size: Callable[[Est], Range], args: list[Est], kinds: list[str], decl: Decl | None
) -> Result:
    joined = c.radd(size(args[0]), size(args[1]))
    entries = [a.entry for a in args]
    entry = c.union(entries[0], entries[1]) if entries[0] and entries[1] else None
    if "list" in kinds:
        return _ONE, joined, decl, None, entry
    if {"string", "bytes"} & set(kinds):
        return c.rfactor(joined, c.STRING_TRAVERSAL), joined, decl, None, None
    if "dyn" in kinds and all(k in ("dyn", "string", "bytes", "list") for k in kinds):
        # dyn + dyn: any of the overloads, strings' among them
        return c.union(_ONE, c.rfactor(joined, c.STRING_TRAVERSAL)), joined, decl, None, None
    return _ONE, None, decl, None, None
