"""A rule's worst-case cost, estimated before the rule is accepted, as cel-go's checker/cost.go
estimates it with Kubernetes' CostEstimator (k8s.io/apiserver/pkg/cel/library/cost.go) and the
CRD's schema for sizes (apiextensions' sizeEstimator): on celpy's parse tree, the macros costed
as the comprehensions cel-go expands them into, sizes taken from the schema path of each value
(maxItems, maxProperties, maxLength, or what a request can hold), from literals, or from what a
function returns. Only the maximum is used (CompilationResult.MaxCost)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import lark

from reconcile.cluster.memory.cel import cost as c
from reconcile.cluster.memory.cel.decltypes import BOOL, INT, STRING, Decl
from reconcile.cluster.memory.cel.walk import Schema
from reconcile.records import dataclass

Range = c.Range


def _names(text: str) -> list[str]:
    return text.split()


_NAMESPACES = frozenset(("optional", "strings", "sets", "lists", "format", "ip", "math"))
_PASS = frozenset(
    ("expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary",
     "member", "paren_expr")
)  # fmt: skip
_RELATIONS = {
    "relation_lt": "_<_", "relation_le": "_<=_", "relation_ge": "_>=_", "relation_gt": "_>_",
    "relation_eq": "_==_", "relation_ne": "_!=_", "relation_in": "_in_",
}  # fmt: skip
_BOOL = _names(
    "contains startsWith endsWith matches isSorted isURL isQuantity isIP isCIDR isCanonical "
    "ip.isCanonical isUnspecified isLoopback isLinkLocalMulticast isLinkLocalUnicast "
    "isGlobalUnicast containsIP containsCIDR isInteger isGreaterThan isLessThan hasValue "
    "sets.contains sets.equivalent sets.intersects bool"
)
_INT = _names(
    "size indexOf lastIndexOf int getDate getDayOfMonth getDayOfWeek getDayOfYear getFullYear "
    "getMonth getHours getMilliseconds getMinutes getSeconds sign compareTo prefixLength family "
    "asInteger"
)
_STRING = _names(
    "string charAt lowerAscii upperAscii replace substring trim join format strings.quote find "
    "getScheme getHost getHostname getPort getEscapedPath"
)
_RESULTS: dict[str, Decl] = {
    **dict.fromkeys(_BOOL, BOOL),
    **dict.fromkeys(_INT, INT),
    **dict.fromkeys(_STRING, STRING),
    "split": Decl("list", elem=STRING),
    "findAll": Decl("list", elem=STRING),
    "url": Decl("url"),
    "quantity": Decl("quantity"),
    "add": Decl("quantity"),
    "sub": Decl("quantity"),
    "ip": Decl("ip"),
    "cidr": Decl("cidr"),
    "masked": Decl("cidr"),
    "semver": Decl("semver"),
    "double": Decl("double"),
    "asApproximateFloat": Decl("double"),
    "uint": Decl("uint"),
    "bytes": Decl("bytes"),
    "duration": Decl("duration"),
    "timestamp": Decl("timestamp"),
}


@dataclass(frozen=True)
class Est:
    """An expression's estimate: its cost range, its type (None: dyn), its path through the
    schema (for sizes), a size computed from the expression, a local variable's own size, and
    the value size of a list or map it builds."""

    cost: Range
    decl: Decl | None = None
    path: tuple[str, ...] | None = None
    size: Range | None = None
    local_size: Range | None = None
    entry: Range | None = None


class Estimator:
    def __init__(self, root: Decl, old_self_optional: bool = False) -> None:
        self.root = root
        self.old_self_optional = old_self_optional
        self.locals: dict[str, list[Est]] = {}

    # --- sizes ---------------------------------------------------------------------------

    def path_size(self, path: tuple[str, ...] | None) -> Range | None:
        """The schema's bound on the value at `path` (its first step, the variable, skipped)."""
        if not path:
            return None
        node: Decl | None = self.root
        for step in path[1:]:
            assert node is not None
            if step in ("@items", "@values"):
                node = node.elem
            elif step == "@keys":
                node = node.key
            else:
                node = node.fields.get(step)
            if node is None:
                return None
        assert node is not None
        return 0, node.max_elements

    def size_of(self, e: Est) -> Range | None:
        """cel-go's computeSize: computed, then the schema's, then a scalar's, then a local's."""
        if e.size is not None:
            return e.size
        found = self.path_size(e.path)
        if found is not None:
            return found
        if e.decl is not None and e.decl.is_scalar:
            return 1, 1
        return e.local_size

    def size_or_unknown(self, e: Est) -> Range:
        return self.size_of(e) or c.UNKNOWN

    # --- the walk ------------------------------------------------------------------------

    def estimate(self, tree: Any) -> Est:
        while isinstance(tree, lark.Tree) and tree.data in _PASS and len(tree.children) == 1:
            tree = tree.children[0]
        kind = str(tree.data)
        children = tree.children
        if kind == "expr":
            return self.conditional(*children)
        if kind in ("conditionalor", "conditionaland"):
            left, right = self.estimate(children[0]), self.estimate(children[1])
            return Est((left.cost[0], c.add(left.cost[1], right.cost[1])), BOOL)
        if kind == "relation":
            operator = _RELATIONS[str(children[0].data)]
            return self.call(operator, None, [children[0].children[0], children[1]])
        if kind in ("addition", "multiplication"):
            operator = str(children[0].data).split("_", 1)[1]
            name = {"add": "_+_", "sub": "_-_", "mul": "_*_", "div": "_/_", "mod": "_%_"}[operator]
            return self.call(name, None, [children[0].children[0], children[1]])
        if kind == "unary":
            name = "!_" if children[0].data == "unary_not" else "-_"
            return self.call(name, None, [children[1]])
        if kind == "member_dot":
            return self.select(children[0], str(children[1]))
        if kind == "member_dot_arg":
            return self.method(children[0], str(children[1]), _arguments(children[2:]))
        if kind == "member_index":
            return self.call("_[_]", None, [children[0], children[1]])
        if kind == "member_object":
            fields = children[1].children[1::2] if len(children) > 1 else []
            return Est(_sum([self.estimate(f).cost for f in fields], c.STRUCT_CREATE))
        if kind == "primary":
            return self.estimate(children[0])
        return self.primary(kind, children)

    def primary(self, kind: str, children: list[Any]) -> Est:
        if kind == "literal":
            return _literal(children[0])
        if kind in ("ident", "dot_ident"):
            return self.identifier(str(children[-1]))
        if kind in ("ident_arg", "dot_ident_arg"):
            return self.function(str(children[0]), _arguments(children[1:]))
        if kind == "list_lit":
            elements = [self.estimate(e) for e in _arguments(children)]
            values = [self.size_or_unknown(e) for e in elements]
            entry = _union_all(values) if values else (0, 0)
            cost = _sum([e.cost for e in elements], c.LIST_CREATE)
            return Est(cost, Decl("list", elem=_common(elements)), None, c.fixed(len(elements)),
                       entry=entry)  # fmt: skip
        if kind == "map_lit":
            parts = [self.estimate(e) for e in _arguments(children)]
            values = [self.size_or_unknown(e) for e in parts[1::2]]
            entry = _union_all(values) if values else (0, 0)
            decl = Decl("map", key=_common(parts[0::2]), elem=_common(parts[1::2]))
            cost = _sum([e.cost for e in parts], c.MAP_CREATE)
            return Est(cost, decl, None, c.fixed(len(parts) // 2), entry=entry)
        return Est((0, 0))

    def identifier(self, name: str) -> Est:
        scoped = self.locals.get(name)
        if scoped:
            local = scoped[-1]
            return replace(local, cost=c.fixed(1), size=None)
        if name in ("self", "oldSelf"):
            decl = self.root
            if name == "oldSelf" and self.old_self_optional:
                decl = Decl("optional", elem=self.root)
            return Est(c.fixed(1), decl, (name,))
        return Est(c.fixed(1), None, (name,))

    def conditional(self, condition: Any, if_true: Any, if_false: Any) -> Est:
        test, yes, no = (self.estimate(t) for t in (condition, if_true, if_false))
        cost = c.radd(test.cost, c.union(yes.cost, no.cost))
        size = c.union(self.size_or_unknown(yes), self.size_or_unknown(no))
        entry = c.union(yes.entry, no.entry) if yes.entry and no.entry else None
        return Est(cost, _common([yes, no]), None, size, entry=entry)

    def select(self, operand_tree: Any, name: str) -> Est:
        operand = self.estimate(operand_tree)
        decl = operand.decl
        cost = operand.cost
        field: Decl | None = None
        if decl is not None and decl.kind in ("object", "map"):
            cost = c.radd(cost, c.fixed(1))
            field = decl.fields.get(name) if decl.kind == "object" else decl.elem
        path = (*(operand.path or ()), name)
        return Est(cost, field, path)

    # --- calls ---------------------------------------------------------------------------

    def method(self, receiver_tree: Any, name: str, args: list[Any]) -> Est:
        namespace = _namespace(receiver_tree)
        if namespace is not None:
            return self.function(f"{namespace}.{name}", args)
        if name in ("all", "exists", "exists_one", "map", "filter") and len(args) == 2:
            return self.macro(name, receiver_tree, args[0], args[1])
        return self.call(name, receiver_tree, args)

    def function(self, name: str, args: list[Any]) -> Est:
        if name == "has" and len(args) == 1:
            operand = _selected(args[0])
            cost = self.estimate(operand).cost if operand is not None else (0, 0)
            return Est(cost, BOOL)
        if name == "dyn" and len(args) == 1:
            inner = self.estimate(args[0])
            return replace(inner, cost=c.radd(inner.cost, c.fixed(1)), decl=None)
        return self.call(name, None, args)

    def call(self, name: str, target_tree: Any, arg_trees: list[Any]) -> Est:
        target = self.estimate(target_tree) if target_tree is not None else None
        args = [self.estimate(a) for a in arg_trees]
        argsum = _sum([a.cost for a in args], 0)
        estimate, size, decl, path, entry = self.function_cost(name, target, args)
        if estimate is None:
            estimate = (1, 1)
        cost = c.radd(estimate, argsum)
        if name not in ("_&&_", "_||_", "_?_:_") and target is not None:
            cost = c.radd(cost, target.cost)
        result = Est(cost, decl, path, None, entry=entry)
        if size is None:
            size = self.size_of(result)
        return replace(result, size=size)

    def function_cost(
        self, name: str, target: Est | None, args: list[Est]
    ) -> tuple[Range | None, Range | None, Decl | None, tuple[str, ...] | None, Range | None]:
        """(the call's own cost, its result's size, type, path and entry size)."""
        from reconcile.cluster.memory.cel.estimate_calls import call_estimate

        return call_estimate(self, name, target, args)

    # --- macros --------------------------------------------------------------------------

    def macro(self, name: str, receiver_tree: Any, variable: Any, body: Any) -> Est:
        receiver = self.estimate(receiver_tree)
        count = self.size_or_unknown(receiver)
        identifier = _identifier(variable)
        decl = receiver.decl
        is_list = decl is not None and decl.kind == "list"
        sub = "@items" if is_list else "@keys"
        element = (decl.elem if is_list else decl.key) if decl is not None else None
        local = Est(c.fixed(1), element, (*(receiver.path or ()), sub), local_size=receiver.entry)
        self.locals.setdefault(identifier, []).append(local)
        try:
            inner = self.estimate(body)
        finally:
            self.locals[identifier].pop()
        p = inner.cost
        if name == "all":
            step, init, result = (3, c.add(3, p[1])), 0, 1
        elif name == "exists":
            step, init, result = (4, c.add(4, p[1])), 0, 1
        elif name == "exists_one":
            step, init, result = (c.add(p[0], 1), c.add(p[1], 2)), 0, 2
        elif name == "map":
            step, init, result = (c.add(p[0], 12), c.add(p[1], 12)), c.LIST_CREATE, 1
        else:  # filter
            step, init, result = (c.add(p[0], 1), c.add(p[1], 13)), c.LIST_CREATE, 1
        cost = c.radd(c.radd(receiver.cost, c.fixed(init + result)), c.rmul(count, step))
        if name in ("all", "exists", "exists_one"):
            return Est(cost, BOOL, None, (1, 1))
        elem = inner.decl if name == "map" else element
        entry = self.size_of(inner) if name == "map" else self.size_of(local)
        return Est(cost, Decl("list", elem=elem), None, count, entry=entry)


def _arguments(rest: list[Any]) -> list[Any]:
    """The expressions of an argument list (exprlist or mapinits), if any."""
    if not rest or not isinstance(rest[0], lark.Tree):
        return []
    return [a for a in rest[0].children if isinstance(a, lark.Tree)]


def _namespace(tree: Any) -> str | None:
    while isinstance(tree, lark.Tree) and len(tree.children) == 1:
        if tree.data == "ident":
            name = str(tree.children[0])
            return name if name in _NAMESPACES else None
        tree = tree.children[0]
    return None


def _identifier(tree: Any) -> str:
    found = list(tree.find_data("ident")) if isinstance(tree, lark.Tree) else []
    return str(found[0].children[0]) if found else ""


def _selected(tree: Any) -> Any:
    """has(e.f): the operand e."""
    while isinstance(tree, lark.Tree) and len(tree.children) == 1:
        tree = tree.children[0]
    if isinstance(tree, lark.Tree) and tree.data == "member_dot":
        return tree.children[0]
    return None


def _literal(token: Any) -> Est:
    kind = getattr(token, "type", "")
    text = str(token)
    if kind in ("STRING_LIT", "MLSTRING_LIT"):
        from reconcile.cluster.memory.cel.estimate_calls import string_literal_length

        return Est((0, 0), STRING, None, c.fixed(string_literal_length(text)))
    if kind == "BYTES_LIT":
        from reconcile.cluster.memory.cel.estimate_calls import bytes_literal_length

        return Est((0, 0), Decl("bytes"), None, c.fixed(bytes_literal_length(text)))
    decl = {
        "INT_LIT": INT,
        "UINT_LIT": Decl("uint"),
        "FLOAT_LIT": Decl("double"),
        "BOOL_LIT": BOOL,
        "NULL_LIT": Decl("null"),
    }.get(kind)
    return Est((0, 0), decl, None, (1, 1))


def _sum(costs: list[Range], base: int) -> Range:
    total: Range = (base, base)
    for cost in costs:
        total = c.radd(total, cost)
    return total


def _union_all(sizes: list[Range]) -> Range:
    low, high = sizes[0]
    for size in sizes[1:]:
        low, high = min(low, size[0]), max(high, size[1])
    return low, high


def _common(parts: list[Est]) -> Decl | None:
    """The type several values share (None: they differ, or none is known)."""
    kinds = {p.decl.kind if p.decl is not None else None for p in parts}
    if len(kinds) == 1 and None not in kinds:
        return parts[0].decl
    return None


def rule_cost(tree: Any, root: Decl, optional_old_self: bool = False) -> int:
    """The maximum estimated cost of a compiled rule whose `self` is of type `root`."""
    return Estimator(root, optional_old_self).estimate(tree).cost[1]


__all__ = ["Est", "Estimator", "Schema", "rule_cost"]
