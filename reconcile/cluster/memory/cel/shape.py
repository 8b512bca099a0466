"""The shape cel-go's parser allows an expression, checked on celpy's parse tree, and the shape it
gives one: at most 100,000 characters; `expr` nested at most 250 deep (parentheses, arguments,
a conditional's last branch: "expression recursion limit exceeded: 250"); at most 250 nested
operations (relations, arithmetic, conditionals, field selections, method calls, indexes: "max
recursion depth exceeded"); and chains of `||` and `&&` balanced, so that a rule of thousands
of alternatives is as shallow for the checker and the evaluator as it is for cel-go."""

from __future__ import annotations

import sys
from typing import Any

import lark

SIZE_LIMIT = 100_000
DEPTH_LIMIT = 250
# celpy's parse tree spends a dozen levels on each of the 250 levels cel-go allows, and the
# checker, the estimate and the evaluator walk it recursively: Python's frames for that
FRAMES = 20_000


def make_room() -> None:
    """Python's recursion limit raised (never lowered) to walk the deepest tree cel-go parses.
    Python 3.11 calls Python functions without the C stack, so the room costs no stack."""
    if sys.getrecursionlimit() < FRAMES:
        sys.setrecursionlimit(FRAMES)


_COMPOUND_WHEN_BINARY = frozenset(("relation", "addition", "multiplication"))
_COMPOUND = frozenset(("member_dot", "member_dot_arg", "member_index"))


def size_error(source: str) -> str | None:
    if len(source) > SIZE_LIMIT:
        return f"expression code point size exceeds limit: size: {len(source)}, limit {SIZE_LIMIT}"
    return None


def depth_error(tree: lark.Tree[Any]) -> str | None:
    """cel-go's words for a tree nested deeper than its parser goes, or None."""
    deepest_expr = deepest_operation = 0
    stack: list[tuple[Any, int, int]] = [(tree, 0, 0)]
    while stack:
        node, exprs, operations = stack.pop()
        if not isinstance(node, lark.Tree):
            continue
        kind = str(node.data)
        if kind == "expr":
            exprs += 1
            if len(node.children) == 3:
                operations += 1
        elif kind in _COMPOUND or (kind in _COMPOUND_WHEN_BINARY and len(node.children) == 2):
            operations += 1
        deepest_expr = max(deepest_expr, exprs)
        deepest_operation = max(deepest_operation, operations)
        stack.extend((child, exprs, operations) for child in node.children)
    if deepest_expr > DEPTH_LIMIT:
        return f"expression recursion limit exceeded: {DEPTH_LIMIT}"
    if deepest_operation > DEPTH_LIMIT:
        return "max recursion depth exceeded"
    return None


def balance(tree: lark.Tree[Any]) -> None:
    """Rebuild each left-deep chain `a || b || c ...` (and `&&`) as a balanced tree, in place."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if str(node.data) in ("conditionalor", "conditionaland") and len(node.children) == 2:
            terms = _chain(node)
            if len(terms) > 2:
                node.children = _balanced(str(node.data), terms, node.meta).children
        stack.extend(c for c in node.children if isinstance(c, lark.Tree))


def _chain(node: lark.Tree[Any]) -> list[Any]:
    """The operands of a left-deep chain of one operator, in order."""
    kind = str(node.data)
    terms: list[Any] = []
    while isinstance(node, lark.Tree) and str(node.data) == kind and len(node.children) == 2:
        terms.append(node.children[1])
        node = node.children[0]
    terms.append(node.children[0] if isinstance(node, lark.Tree) and node.children else node)
    return terms[::-1]


def _balanced(kind: str, terms: list[Any], meta: Any) -> lark.Tree[Any]:
    """`kind` over `terms`: the left half a chain of its own, the right half parenthesized (the
    grammar's right operand is one level down). `meta`: the chain's, for errors' positions."""
    if len(terms) == 1:
        return lark.Tree(kind, [terms[0]], meta)
    middle = len(terms) // 2
    left = _balanced(kind, terms[:middle], meta)
    right = _balanced(kind, terms[middle:], meta)
    return lark.Tree(kind, [left, _parenthesized(right, kind, meta)], meta)


def _parenthesized(tree: lark.Tree[Any], kind: str, meta: Any) -> Any:
    """`tree` (a chain) as the right operand of `kind`: the grammar's levels down to a primary
    that holds it in parentheses."""
    if len(tree.children) == 1:
        return tree.children[0]
    chain = tree if kind == "conditionalor" else lark.Tree("conditionalor", [tree], meta)
    expr = lark.Tree("expr", [chain], meta)
    inner: Any = lark.Tree("primary", [lark.Tree("paren_expr", [expr], meta)], meta)
    levels = ["member", "unary", "multiplication", "addition", "relation"]
    if kind == "conditionalor":
        levels.append("conditionaland")
    for level in levels:
        inner = lark.Tree(level, [inner], meta)
    return inner
