"""Evaluation errors with cel-go's words, which the API server quotes in its field errors."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from celpy.evaluation import CELEvalError


class CelError(Exception):
    """An evaluation error a library function raises, in cel-go's words."""


def cel_function(function: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a `CelError` into the error value celpy carries through an expression (so `||`
    and `&&` can still absorb it, as CEL's commutative logic operators do)."""

    @wraps(function)
    def call(*args: Any) -> Any:
        for arg in args:
            if isinstance(arg, CELEvalError):
                return arg
        try:
            return function(*args)
        except CelError as error:
            return CELEvalError(str(error))
        except RecursionError:
            return CELEvalError("max recursion depth exceeded")

    return call


def cel_go_message(error: CELEvalError) -> str:
    """cel-go's text for an error celpy reports in its own words."""
    message = str(error.args[0]) if error.args else "evaluation error"
    kind = error.args[1] if len(error.args) > 1 else None
    detail = error.args[2] if len(error.args) > 2 else None
    if message.startswith("no such member in mapping: "):
        return "no such key: " + message.removeprefix("no such member in mapping: ").strip("'")
    if message == "no such key" and detail:
        return f"no such key: {detail[0]}"
    if kind is ZeroDivisionError:
        text = str(detail[0]) if detail else ""
        return "division by zero" if "division" in text else "modulus by zero"
    if message.startswith("Attempt to reduce an empty sequence"):
        return "min called on empty list"  # celpy runs `min()` as its own macro
    if message == "return error for overflow":
        text = str(detail[0]) if detail else ""
        return "integer overflow" if "overflow" in text else text or "range error"
    if message.startswith("found no matching overload") or message == "no such overload":
        return "no such overload"
    if message.startswith("undeclared reference to "):
        name = message.removeprefix("undeclared reference to ").split(" ", 1)[0]
        return f"no such overload: {name.strip(repr(chr(39)))}"
    return message
