"""Compiling a CEL rule as the API server of one release does, as far as celpy lets us:
syntax, references to variables and functions the release's environment declares, fields of
`self` its schema declares, the literal checks of 1.30 on (regex, duration, timestamp); and
evaluating it, with cel-go's error words.

cel-go's type checker is not reproduced: a rule it would refuse for its types (`self.name + 1`)
fails when it runs instead, as a "no such overload" error."""

from __future__ import annotations

from dataclasses import field
from functools import lru_cache
from typing import Any

import celpy
import lark
from celpy.celparser import CELParseError

from reconcile.cluster.memory.cel import kubetypes, library, shape
from reconcile.cluster.memory.cel.errors import CelError
from reconcile.cluster.memory.cel.values import (
    Schema,
    additional,
    escape,
    is_dynamic,
    parse_duration,
    parse_timestamp,
    properties,
    resource_fields,
)
from reconcile.records import dataclass

# The first release whose API server compiles new rules with these (a library is introduced in
# release N's environment and is usable by rules written to release N+1, the compatibility
# version kube-apiserver compiles new expressions with: k8s.io/apiserver/pkg/cel/environment).
_BASE = 25
_FUNCTIONS_SINCE: dict[str, int] = {
    **dict.fromkeys(
        [
            "size",
            "contains",
            "startsWith",
            "endsWith",
            "matches",
            "int",
            "uint",
            "double",
            "bool",
            "string",
            "bytes",
            "duration",
            "timestamp",
            "dyn",
            "type",
            "getDate",
            "getDayOfMonth",
            "getDayOfWeek",
            "getDayOfYear",
            "getFullYear",
            "getMonth",
            "getHours",
            "getMilliseconds",
            "getMinutes",
            "getSeconds",
            "charAt",
            "indexOf",
            "lastIndexOf",
            "lowerAscii",
            "upperAscii",
            "replace",
            "split",
            "substring",
            "trim",
            "join",
            "isSorted",
            "sum",
            "min",
            "max",
            "find",
            "findAll",
            "url",
            "isURL",
            "getScheme",
            "getHost",
            "getHostname",
            "getPort",
            "getEscapedPath",
            "getQuery",
        ],
        _BASE,
    ),
    # optional types and the quantity library (introduced in 1.28)
    **dict.fromkeys(
        [
            "of",
            "none",
            "ofNonZeroValue",
            "hasValue",
            "value",
            "orValue",
            "or",
            "quantity",
            "isQuantity",
            "sign",
            "isInteger",
            "asInteger",
            "asApproximateFloat",
            "add",
            "sub",
            "isGreaterThan",
            "isLessThan",
            "compareTo",
        ],
        29,
    ),
    # ext.Strings v2 (format, strings.quote) and ext.Sets (introduced in 1.29)
    **dict.fromkeys(["format", "quote", "equivalent", "intersects"], 30),
    # ip and cidr (introduced in 1.30)
    **dict.fromkeys(
        [
            "ip",
            "isIP",
            "isCanonical",
            "family",
            "isUnspecified",
            "isLoopback",
            "isLinkLocalMulticast",
            "isLinkLocalUnicast",
            "isGlobalUnicast",
            "cidr",
            "isCIDR",
            "containsIP",
            "containsCIDR",
            "masked",
            "prefixLength",
        ],
        31,
    ),
    # the format library (introduced in 1.31)
    **dict.fromkeys(("named", "validate", *kubetypes.FORMAT_NAMES), 32),
}
_NAMESPACES_SINCE = {"optional": 29, "strings": 30, "sets": 30, "ip": 31, "format": 32}
# In the release's environment, but not evaluated here: a rule using them is refused on write.
UNMODELLED_SINCE: dict[str, int] = {
    **dict.fromkeys(["transformList", "transformMap", "transformMapEntry"], 33),
    **dict.fromkeys(["semver", "isSemver", "major", "minor", "patch"], 34),
    **dict.fromkeys(
        ["slice", "flatten", "distinct", "reverse", "sort", "sortBy", "first", "last", "range"], 35
    ),
}
_MACROS = frozenset(("all", "exists", "exists_one", "map", "filter"))
_TYPE_NAMES = frozenset(
    [
        "int",
        "uint",
        "double",
        "bool",
        "string",
        "bytes",
        "list",
        "map",
        "null_type",
        "type",
        "dyn",
        "google",
    ]
)
LITERAL_CHECKS_SINCE = 30
_ENVIRONMENT = celpy.Environment()
shape.make_room()


@dataclass
class Compiled:
    """A rule, compiled: `error` is the compile error as the server words it (None: fine)."""

    source: str
    tree: lark.Tree[Any] | None = None
    error: str | None = None
    uses_old_self: bool = False
    unmodelled: list[str] = field(default_factory=list)


@dataclass
class _Scope:
    schema: Schema | None  # None: not typed here (a comprehension variable, a literal)
    optional: bool = False


class _Checker:
    def __init__(self, source: str, self_schema: Schema, minor: int, optional_old_self: bool):
        self.source, self.minor = source, minor
        self.self_schema = self_schema
        self.optional_old_self = optional_old_self
        self.problems: list[tuple[int, int, str]] = []
        self.uses_old_self = False
        self.unmodelled: list[str] = []

    def problem(self, token: Any, message: str, shift: int = 0) -> None:
        line = int(getattr(token, "line", 1) or 1)
        column = int(getattr(token, "column", 1) or 1) + shift
        self.problems.append((line, column, message))

    def check(self, tree: lark.Tree[Any], bound: frozenset[str]) -> _Scope:
        kind = tree.data
        children = tree.children
        if kind == "ident":
            return self.identifier(children[0], bound)
        if kind == "member_dot":
            scope = self.check(children[0], bound)
            return self.select(scope, children[1])
        if kind == "ident_arg":
            return self.call(children[0], None, children[1] if len(children) > 1 else None, bound)
        if kind == "member_dot_arg":
            receiver = children[0]
            args = children[2] if len(children) > 2 else None
            return self.call(children[1], receiver, args, bound)
        for child in children:
            if isinstance(child, lark.Tree):
                result = self.check(child, bound)
                if len(children) == 1:
                    return result
        return _Scope(None)

    def identifier(self, token: Any, bound: frozenset[str]) -> _Scope:
        name = str(token)
        if name in bound:
            return _Scope(None)
        if name == "self":
            return _Scope(self.self_schema)
        if name == "oldSelf":
            self.uses_old_self = True
            return _Scope(self.self_schema, optional=self.optional_old_self)
        if name in _NAMESPACES_SINCE and self.minor >= _NAMESPACES_SINCE[name]:
            return _Scope(None)
        if name in ("math", "lists") and self.minor >= UNMODELLED_SINCE["range"]:
            return _Scope(None)
        if name in _TYPE_NAMES:
            return _Scope(None)
        self.problem(token, f"undeclared reference to '{name}' (in container '')")
        return _Scope(None)

    def select(self, scope: _Scope, token: Any) -> _Scope:
        schema = scope.schema
        name = str(token)
        if schema is None or scope.optional or is_dynamic(schema):
            return _Scope(None)
        fields = _cel_fields(schema)
        if fields is None:
            return _Scope(None)
        if name not in fields:
            self.problem(token, f"undefined field '{name}'", shift=-1)
            return _Scope(None)
        return _Scope(fields[name])

    def call(self, token: Any, receiver: Any, args: Any, bound: frozenset[str]) -> _Scope:
        name = str(token)
        arguments = [
            a for a in (args.children if args is not None else []) if isinstance(a, lark.Tree)
        ]
        if name == "has" and receiver is None:
            for argument in arguments:
                self.check(argument, bound)
            return _Scope(None)
        if receiver is not None and name in _MACROS and arguments:
            self.check(receiver, bound)
            variable = _bare_identifier(arguments[0])
            inner = bound | {variable} if variable else bound
            for argument in arguments[1:]:
                self.check(argument, inner)
            return _Scope(None)
        if receiver is not None:
            self.check(receiver, bound)
        for argument in arguments:
            self.check(argument, bound)
        since = _FUNCTIONS_SINCE.get(name)
        if name == "format" and receiver is not None and _bare_identifier(receiver) == "format":
            since = None  # `format.x()` is the format library's, checked by its name
        if name in UNMODELLED_SINCE and self.minor >= UNMODELLED_SINCE[name]:
            self.unmodelled.append(name)
            return _Scope(None)
        if since is None and name in ("format",):
            since = _FUNCTIONS_SINCE["named"]
        if since is None or self.minor < since:
            self.problem(
                token,
                f"undeclared reference to '{name}' (in container '')",
                shift=-1 if receiver is not None else 0,
            )
            return _Scope(None)
        if self.minor >= LITERAL_CHECKS_SINCE:
            self.literal_checks(name, receiver, arguments)
        return _Scope(None)

    def literal_checks(self, name: str, receiver: Any, arguments: list[lark.Tree[Any]]) -> None:
        literal = _string_literal(arguments[0]) if len(arguments) == 1 else None
        if literal is None:
            return
        token, text = literal
        if name == "matches":
            try:
                library.compile_regex(text)
            except CelError:
                self.problem(token, "invalid matches argument")
        elif name == "duration" and receiver is None and parse_duration(text) is None:
            self.problem(token, "invalid duration argument")
        elif name == "timestamp" and receiver is None and parse_timestamp(text) is None:
            self.problem(token, "invalid timestamp")


def _cel_fields(schema: Schema) -> dict[str, Schema] | None:
    """The fields CEL declares on an object schema by their CEL names (None: a map, or
    fields not declared)."""
    if schema.get("type") != "object":
        return None
    if schema.get("x-kubernetes-embedded-resource") is True:
        declared = resource_fields(schema)
    else:
        declared = properties(schema)
        if not declared and additional(schema) is not None:
            return None
    fields: dict[str, Schema] = {}
    for key, sub in declared.items():
        name = escape(key)
        if name is not None:
            fields[name] = sub
    return fields


def _bare_identifier(tree: Any) -> str | None:
    while isinstance(tree, lark.Tree) and len(tree.children) == 1:
        if tree.data == "ident":
            return str(tree.children[0])
        tree = tree.children[0]
    return None


def _string_literal(tree: Any) -> tuple[Any, str] | None:
    while isinstance(tree, lark.Tree) and len(tree.children) == 1:
        if tree.data == "literal":
            token = tree.children[0]
            text = str(token)
            if getattr(token, "type", "") in ("STRING_LIT", "MLSTRING_LIT") or text[:1] in "'\"":
                return token, _unquote(text)
            return None
        tree = tree.children[0]
    return None


def _unquote(text: str) -> str:
    for quote in ('"""', "'''", '"', "'"):
        if text.startswith(quote) and text.endswith(quote) and len(text) >= 2 * len(quote):
            return text[len(quote) : -len(quote)]
    return text


def _report(source: str, problems: list[tuple[int, int, str]]) -> str:
    """cel-go's `Issues.String()`: each error with the line it is on and a caret under it."""
    lines = source.split("\n")
    parts = []
    for line, column, message in problems:
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        pointer = "." * max(column - 1, 0) + "^"
        parts.append(f"ERROR: <input>:{line}:{column}: {message}\n | {text}\n | {pointer}")
    return "\n".join(parts)


def compile_rule(
    source: str,
    self_schema: Schema,
    minor: int,
    *,
    resource_root: bool = False,
    optional_old_self: bool = False,
) -> Compiled:
    """`resource_root`: `self` is a resource (the custom resource, an embedded one)."""
    return _compile(source, _Frozen(self_schema, resource_root), minor, optional_old_self)


class _Frozen:
    """A schema node, hashed by identity: compiled rules are cached per node."""

    def __init__(self, schema: Schema, resource_root: bool) -> None:
        self.schema, self.resource_root = schema, resource_root

    def typed(self) -> Schema:
        if not self.resource_root:
            return self.schema
        return {"type": "object", "properties": resource_fields(self.schema)}

    def __hash__(self) -> int:
        return hash((id(self.schema), self.resource_root))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _Frozen)
            and other.schema is self.schema
            and other.resource_root == self.resource_root
        )


@lru_cache(maxsize=4096)
def _compile(source: str, schema: _Frozen, minor: int, optional_old_self: bool) -> Compiled:
    compiled = Compiled(source)
    too_big = shape.size_error(source)
    if too_big is not None:
        compiled.error = f"compilation failed: ERROR: <input>:-1:0: {too_big}"
        return compiled
    try:
        tree = _ENVIRONMENT.compile(source)
    except RecursionError:
        compiled.error = "compilation failed: ERROR: <input>:-1:0: max recursion depth exceeded"
        return compiled
    except CELParseError as error:
        line = int(getattr(error, "line", None) or 1)
        column = int(getattr(error, "column", None) or 1)
        message = (
            "Syntax error: " + str(error.args[0]).split("\n")[0] if error.args else "Syntax error"
        )
        compiled.error = "compilation failed: " + _report(source, [(line, column, message)])
        return compiled
    too_deep = shape.depth_error(tree)
    if too_deep is not None:
        compiled.error = f"compilation failed: ERROR: <input>:-1:0: {too_deep}"
        return compiled
    shape.balance(tree)
    checker = _Checker(source, schema.typed(), minor, optional_old_self)
    checker.check(tree, frozenset())
    if checker.problems:
        compiled.error = "compilation failed: " + _report(source, checker.problems)
        return compiled
    for node in tree.iter_subtrees():
        node.data = str(node.data)  # plain strings: the evaluator compares them constantly
    compiled.tree = tree
    compiled.uses_old_self = checker.uses_old_self
    compiled.unmodelled = checker.unmodelled
    return compiled
