"""Evaluating a compiled rule as cel-go does under kube-apiserver's cost tracking: every step
costs what cel-go's runtime cost tracker charges for it (an identifier or a field 1, a list
literal 10, a map literal 30, each call its own cost, the macros' loops per element), and the
evaluation stops once it costs more than its limit (`CostLimitExceeded`, cel-go's "operation
cancelled: actual cost limit exceeded"). `&&`, `||` and `all`/`exists` stop as soon as their
answer is known, as cel-go's do, so that the work done is the work cel-go would do.

And a wall clock: every few hundred steps the run's governing budget is asked
(`reconcile.budget.checkpoint`), so that a long evaluation ends with BudgetExhausted when
`--max-duration` ends or a signal stops the run, whatever its cost limit allows (celpy is some
hundred times slower than cel-go: a limit that takes cel-go 0.1 s takes celpy most of a
minute)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

import celpy
import lark
from celpy import celtypes
from celpy.evaluation import Activation, CELEvalError, Evaluator, base_functions

from reconcile.budget import checkpoint
from reconcile.cluster.memory.cel import kubetypes, library, runtime
from reconcile.cluster.memory.cel.cost import LIMIT_EXCEEDED, LIST_CREATE, MAP_CREATE, call_cost
from reconcile.cluster.memory.cel.errors import cel_go_message

CHECK_EVERY = 256  # steps between two looks at the run's budget
_PASS_THROUGH = frozenset(
    ("expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary",
     "member")
)  # fmt: skip
_RELATIONS = {
    "relation_lt": "_<_", "relation_le": "_<=_", "relation_ge": "_>=_", "relation_gt": "_>_",
    "relation_eq": "_==_", "relation_ne": "_!=_", "relation_in": "_in_",
}  # fmt: skip
_ADDITIONS = {"addition_add": "_+_", "addition_sub": "_-_"}
_MULTIPLICATIONS = {
    "multiplication_mul": "_*_", "multiplication_div": "_/_", "multiplication_mod": "_%_"
}  # fmt: skip
_MACROS = frozenset(("all", "exists", "exists_one", "map", "filter"))
_NO_COST = frozenset(("_?_:_", "_&&_", "_||_"))
_CHARGED_FIRST = frozenset(("sets.contains", "sets.intersects", "sets.equivalent"))


class CostLimitExceeded(Exception):
    """The evaluation cost more than its limit; cel-go's words."""

    def __init__(self) -> None:
        super().__init__(LIMIT_EXCEEDED)


class Meter:
    """The cost of one evaluation so far, its limit, and the steps since the budget was asked."""

    def __init__(self, limit: int | None, what: str) -> None:
        self.cost = 0
        self.limit = limit
        self.what = what
        self.produced = 0
        self._steps = 0

    def produce(self, size: int) -> None:
        """What the evaluation built, in characters and elements: bounded (runtime)."""
        self.produced += size
        runtime.check_produced(self.produced)

    def charge(self, amount: int) -> None:
        self.cost += amount
        if self.limit is not None and self.cost > self.limit:
            raise CostLimitExceeded
        self._steps += 1
        if self._steps >= CHECK_EVERY:
            self._steps = 0
            checkpoint(self.what)


_current = threading.local()


def _meter() -> Meter | None:
    return getattr(_current, "meter", None)


def _metered(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """`function` charging the current meter cel-go's cost of the call."""

    def call(*args: Any) -> Any:
        meter = _meter()
        qualified, plain = name, list(args)
        if args and isinstance(args[0], runtime.Namespace):
            qualified, plain = f"{args[0].name}.{name}", plain[1:]
        if meter is not None and qualified in _CHARGED_FIRST:
            # its cost (the product of two lists' sizes) is known from its arguments: charged
            # before the work, which a limit then spares (cel-go charges after; same verdict)
            meter.charge(call_cost(qualified, plain, None))
        try:
            result = function(*args)
        except BaseException:
            if meter is not None:
                meter.charge(1)
            raise
        if meter is not None and isinstance(result, str | bytes | list | dict):
            meter.produce(len(result))
        if meter is not None and name not in _NO_COST and qualified not in _CHARGED_FIRST:
            meter.charge(call_cost(qualified, plain, result))
        return result

    call.__name__ = getattr(function, "__name__", name)
    return call


def metered_functions(functions: dict[str, Callable[..., Any]]) -> dict[str, Any]:
    """celpy's functions and `functions` over them, each charging its cost."""
    return {
        # a type (`int`, `string`) is also a value (`type(x) == int`): it stays itself, its
        # conversions are charged by the evaluator
        name: function if isinstance(function, type) else _metered(name, function)
        for name, function in {**base_functions, **functions}.items()
    }


class Metered(Evaluator):
    """celpy's evaluator, charging cel-go's costs to `meter` and short-circuiting as cel-go."""

    def __init__(self, ast: lark.Tree[Any], activation: Activation, meter: Meter) -> None:
        super().__init__(ast, activation)
        self.meter = meter

    def sub_evaluator(self, ast: lark.Tree[Any]) -> Evaluator:
        return Metered(ast, self.activation, self.meter)

    def evaluate(self, context: Any = None) -> celtypes.Value:
        previous = _meter()
        _current.meter = self.meter
        try:
            return super().evaluate(context)
        finally:
            _current.meter = previous

    # --- celpy's evaluation without its overheads (same values, same errors) ---------------

    def _visit_tree(self, tree: lark.Tree[Any]) -> Any:
        # the grammar's one-child levels (expr > conditionalor > ... > member) pass through
        while tree.data in _PASS_THROUGH and len(tree.children) == 1:
            tree = tree.children[0]
        return getattr(self, tree.data)(tree)

    def visit(self, tree: lark.Tree[Any]) -> Any:
        return self._visit_tree(tree)

    def visit_children(self, tree: lark.Tree[Any]) -> list[Any]:
        return [
            self._visit_tree(child) if isinstance(child, lark.Tree) else child
            for child in tree.children
        ]

    def ident_value(self, name: str, root_scope: bool = False) -> Any:
        """The innermost binding of `name` (celpy's resolve_name finds the same, slowly)."""
        container: Any = self.activation.identifiers
        while container is not None:
            referent = dict.get(container, name)
            if referent is not None:
                return referent.value
            container = container.parent
        return self.activation.functions[name]

    def relation(self, tree: lark.Tree[Any]) -> Any:
        return self._operator(tree, _RELATIONS)

    def addition(self, tree: lark.Tree[Any]) -> Any:
        return self._operator(tree, _ADDITIONS)

    def multiplication(self, tree: lark.Tree[Any]) -> Any:
        return self._operator(tree, _MULTIPLICATIONS)

    def unary(self, tree: lark.Tree[Any]) -> Any:
        if len(tree.children) == 1:
            return self.visit(tree.children[0])
        operator, operand_tree = tree.children
        name = "!_" if operator.data == "unary_not" else "-_"
        operand = self.visit(operand_tree)
        try:
            return self.activation.resolve_function(name)(operand)
        except TypeError as error:
            message = f"found no matching overload for {operator.data!r} applied to operand"
            return _error(message, error, tree)
        except ValueError as error:
            return _error("return error for overflow", error, tree)

    def _operator(self, tree: lark.Tree[Any], names: dict[str, str]) -> Any:
        if len(tree.children) == 1:
            return self.visit(tree.children[0])
        operator, right_tree = tree.children
        name = names[operator.data]
        left = self.visit(operator.children[0])
        right = self.visit(right_tree)
        try:
            return self.activation.resolve_function(name)(left, right)
        except TypeError as error:
            message = f"found no matching overload for {operator.data!r} applied to operands"
            return _error(message, error, tree)
        except ZeroDivisionError as error:
            return _error("modulus or divide by zero", error, tree)
        except (ValueError, OverflowError) as error:
            return _error("return error for overflow", error, tree)

    # --- what costs what -------------------------------------------------------------------

    def primary(self, tree: lark.Tree[Any]) -> Any:
        child = tree.children[0]
        kind = child.data if isinstance(child, lark.Tree) else ""
        if kind == "ident_arg" and str(child.children[0]) == "has":
            before = self.meter.cost
            result = super().primary(tree)
            # the presence test itself is free (PresenceTestHasCost(false)); its operand is not
            if self.meter.cost > before:
                self.meter.cost -= 1
            return result
        if kind == "ident":
            return self._identifier(child, tree)
        if kind == "literal":
            return self._literal(child)
        result = super().primary(tree)
        if kind == "ident_arg" and str(child.children[0]) == "dyn":
            self.meter.charge(1)
        elif kind == "list_lit" and not _constant(child):
            self.meter.charge(LIST_CREATE)
        elif kind == "map_lit" and not _constant(child):
            self.meter.charge(MAP_CREATE)
        return result

    def _identifier(self, ident: lark.Tree[Any], tree: lark.Tree[Any]) -> Any:
        token = str(ident.children[0])
        try:
            value = self.ident_value(token)
        except KeyError as error:
            message = f"undeclared reference to '{token}' (in activation '{self.activation}')"
            return _error(message, error, tree)
        if not isinstance(value, runtime.Namespace | type):  # a name, not a value: free
            self.meter.charge(1)
        return value

    def _literal(self, literal: lark.Tree[Any]) -> Any:
        """A literal's value, made once per literal (values are immutable)."""
        value = getattr(literal, "_metered_value", _UNSET)
        if value is _UNSET:
            value = self.literal(literal)
            if not isinstance(value, CELEvalError):
                literal._metered_value = value  # type: ignore[attr-defined]
        return value

    def function_eval(self, name_token: Any, exprlist: Any = None) -> Any:
        result = super().function_eval(name_token, exprlist)
        function = self.activation.functions.get(name_token.value)
        if isinstance(function, type):  # a conversion (int(x), string(b)): not wrapped
            arguments = list(exprlist) if isinstance(exprlist, list) else []
            self.meter.charge(call_cost(name_token.value, arguments, result))
        return result

    def member_dot(self, tree: lark.Tree[Any]) -> Any:
        result = super().member_dot(tree)
        self.meter.charge(1)
        return result

    def conditionalor(self, tree: lark.Tree[Any]) -> Any:
        return self._logical(tree, "_||_", stop=True)

    def conditionaland(self, tree: lark.Tree[Any]) -> Any:
        return self._logical(tree, "_&&_", stop=False)

    def _logical(self, tree: lark.Tree[Any], name: str, *, stop: bool) -> Any:
        """`a || b` (`a && b`): `b` is not evaluated once `a` is true (false)."""
        if len(tree.children) == 1:
            return self.visit(tree.children[0])
        left = self.visit(tree.children[0])
        if isinstance(left, celtypes.BoolType) and bool(left) is stop:
            return left
        right = self.visit(tree.children[1])
        try:
            return self.activation.resolve_function(name)(left, right)
        except TypeError as error:
            return CELEvalError("no such overload", TypeError, error.args, tree=tree)

    def member_dot_arg(self, tree: lark.Tree[Any]) -> Any:
        name = str(tree.children[1])
        args = tree.children[2] if len(tree.children) > 2 else None
        arguments = [a for a in args.children if isinstance(a, lark.Tree)] if args else []
        if name in _MACROS and len(arguments) == 2:
            receiver = self.visit(tree.children[0])
            if isinstance(receiver, CELEvalError):
                return receiver
            if not isinstance(receiver, runtime.Namespace):
                return self._macro(name, receiver, arguments[0], arguments[1], tree)
        return super().member_dot_arg(tree)

    # --- the macros, as cel-go expands them into comprehensions -----------------------------

    def _macro(
        self, name: str, receiver: Any, variable: Any, body: lark.Tree[Any], tree: Any
    ) -> Any:
        identifiers = list(variable.find_data("ident"))
        if len(identifiers) != 1 or not isinstance(receiver, list | dict):
            return CELEvalError("no such overload", TypeError, (), tree=tree)
        identifier = str(identifiers[0].children[0])
        # one scope for the loop, its variable rebound per element (celpy would copy every
        # name in scope for each element)
        scope = self.activation.nested_activation(vars={identifier: None})
        binding = scope.identifiers[identifier]
        nested = Metered(body, scope, self.meter)

        def each(value: Any) -> Any:
            binding.value = value
            try:
                return nested.visit(body)
            except CELEvalError as error:
                return error

        items: Iterable[Any] = list(receiver) if isinstance(receiver, dict) else receiver
        if name in ("all", "exists"):
            return self._quantifier(items, each, exists=name == "exists")
        if name == "exists_one":
            return self._exists_one(items, each)
        return self._collect(items, each, keep_all=name == "map")

    def _quantifier(self, items: Iterable[Any], each: Callable[[Any], Any], *, exists: bool) -> Any:
        """all (exists): accumulated with && (||), stopping once false (true) is found; an error
        counts only when nothing decides the answer."""
        found: Any = celtypes.BoolType(False) if exists else celtypes.BoolType(True)
        for value in items:
            # the loop condition, @not_strictly_false(accumulator) (of !accumulator for exists)
            self.meter.charge(3 if exists else 2)
            if isinstance(found, celtypes.BoolType) and bool(found) is exists:
                break
            self.meter.charge(1)  # the accumulator in the step
            outcome = each(value)
            if isinstance(outcome, celtypes.BoolType):
                if bool(outcome) is exists:
                    found = outcome
            elif not isinstance(found, CELEvalError):
                found = (
                    outcome
                    if isinstance(outcome, CELEvalError)
                    else CELEvalError("no such overload", TypeError, ())
                )
        self.meter.charge(1)  # the result
        return found

    def _exists_one(self, items: Iterable[Any], each: Callable[[Any], Any]) -> Any:
        count: Any = 0
        for value in items:
            outcome = each(value)
            if isinstance(count, CELEvalError):
                continue
            if isinstance(outcome, CELEvalError):
                count = outcome
            elif not isinstance(outcome, celtypes.BoolType):
                count = CELEvalError("no such overload", TypeError, ())
            elif bool(outcome):
                self.meter.charge(2)  # accumulator + 1
                count += 1
            else:
                self.meter.charge(1)  # accumulator
        self.meter.charge(2)  # accumulator == 1
        return count if isinstance(count, CELEvalError) else celtypes.BoolType(count == 1)

    def _collect(self, items: Iterable[Any], each: Callable[[Any], Any], *, keep_all: bool) -> Any:
        """map (keep_all) and filter: errors carry through, every element is still visited."""
        collected: Any = celtypes.ListType()
        for value in items:
            outcome = each(value)
            if keep_all:
                self.meter.charge(1 + LIST_CREATE + 1)  # accumulator + [f(x)]
            elif isinstance(outcome, celtypes.BoolType) and bool(outcome):
                self.meter.charge(1 + 1 + LIST_CREATE + 1)  # accumulator + [x]
            else:
                self.meter.charge(1)  # accumulator
            if isinstance(collected, CELEvalError):
                continue
            if isinstance(outcome, CELEvalError):
                collected = outcome
            elif keep_all:
                collected.append(outcome)
            elif not isinstance(outcome, celtypes.BoolType):
                collected = CELEvalError("no such overload", TypeError, ())
            elif bool(outcome):
                collected.append(value)
        self.meter.charge(1)  # the result
        return collected


_UNSET = object()


def _error(message: str, error: BaseException, tree: lark.Tree[Any]) -> CELEvalError:
    value = CELEvalError(message, error.__class__, error.args, tree=tree)
    value.__cause__ = error
    return value


def _constant(literal: lark.Tree[Any]) -> bool:
    """A list or map literal of literals only: cel-go folds it into a constant (OptOptimize)."""
    for node in literal.iter_subtrees():
        if node.data in ("ident", "ident_arg", "member_dot", "member_dot_arg", "member_index"):
            return False
    return True


_ENVIRONMENT = celpy.Environment()
_FUNCTIONS = metered_functions({**library.functions(), **kubetypes.functions()})


def evaluate(compiled: Any, variables: dict[str, Any], meter: Meter) -> tuple[Any, str | None]:
    """(the result, None) or (None, cel-go's words for the evaluation error) of a compiled rule
    (`program.Compiled`), charging `meter` what cel-go's cost tracker would: past its limit,
    the error is cel-go's "operation cancelled: actual cost limit exceeded". BudgetExhausted
    when the run's time ends or a signal stops it."""
    bound: dict[str, Any] = {ns: runtime.Namespace(ns) for ns in library.NAMESPACES}
    bound.update(variables)
    activation = Activation(
        package=_ENVIRONMENT.package, annotations=_ENVIRONMENT.annotations, functions=_FUNCTIONS
    )
    try:
        result = Metered(compiled.tree, activation, meter).evaluate(bound)
    except CELEvalError as error:
        return None, cel_go_message(error)
    except (CostLimitExceeded, runtime.ProducedTooMuch) as error:
        return None, str(error)
    except RecursionError:
        return None, "max recursion depth exceeded"
    if isinstance(result, CELEvalError):
        return None, cel_go_message(result)
    return result, None
