"""kube-openapi's validation errors as its validator reports them (`Problem`: a path, a message,
a code telling apart what apiextensions-apiserver words differently), gathered per schema with
how much of the schema matched (`Result`, which picks the branch of an `anyOf`/`oneOf` to
report), and turned into field errors as apiextensions-apiserver turns them, in the words of
the release (`field_errors`)."""

from __future__ import annotations

from dataclasses import field
from typing import Any, TypeGuard

from reconcile.cluster.memory.golang.printing import go_json, go_quote
from reconcile.cluster.memory.validation import fielderrors
from reconcile.cluster.memory.validation.fielderrors import TYPED_ERRORS_SINCE, FieldWording
from reconcile.records import dataclass

# kube-openapi's error codes, as apiextensions-apiserver tells them apart
INVALID = "invalid"
TYPE = "type"  # InvalidTypeCode: wrong type, or a string not in its format
REQUIRED = "required"
ENUM = "enum"
TOO_LONG = "too long"  # maxLength
TOO_MANY = "too many"  # maxItems, maxProperties
UNTYPED = "untyped"  # not an openapi Validation error: composite (anyOf, ...) or range check


@dataclass
class Problem:
    """One error of kube-openapi's validator: `name` is its path, `message` its text, `value`
    and `limit` its `Value` and `Valid`."""

    name: str
    message: str
    code: str = INVALID
    value: Any = None
    values: list[Any] = field(default_factory=list)
    limit: int = -1


@dataclass
class Result:
    errors: list[Problem] = field(default_factory=list)
    matches: int = 0

    def add(self, *problems: Problem) -> None:
        for problem in problems:
            if all(problem.message != seen.message for seen in self.errors):
                self.errors.append(problem)

    def merge(self, *others: Result | None) -> Result:
        for other in others:
            if other is not None:
                self.add(*other.errors)
                self.matches += other.matches
        return self


def failed(problem: Problem) -> Result:
    return Result([problem])


def is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def type_name(value: Any) -> tuple[str, str]:
    """The type and format kube-openapi sees in a decoded JSON value."""
    if isinstance(value, bool):
        return "boolean", ""
    if isinstance(value, int):
        return "integer", "int64"
    if isinstance(value, float):
        return "number", "float64"
    if isinstance(value, str):
        return "string", ""
    if isinstance(value, list):
        return "array", ""
    return "object", ""


def invalid_type(name: str, type_name: str, value: Any) -> Problem:
    text = f"{name} in body must be of type {type_name}"
    if isinstance(value, str):
        text += f": {go_quote(value)}"
    return Problem(name, text, TYPE, value)


def composite(message: str) -> Problem:
    return Problem("", message, UNTYPED)


def field_errors(result: Result, minor: int) -> list[fielderrors.FieldError]:
    """apiextensions-apiserver's translation of kube-openapi's errors into field errors
    (`kubeOpenAPIResultToFieldErrors`)."""
    words = FieldWording(minor)
    typed = minor >= TYPED_ERRORS_SINCE
    errors: list[fielderrors.FieldError] = []
    for problem in result.errors:
        name = (problem.name[1:] if problem.name.startswith(".") else problem.name) or "<nil>"
        value = "" if problem.value is None else problem.value
        if problem.code == UNTYPED:
            errors.append(words.invalid("<nil>", "", problem.message))
        elif problem.code == REQUIRED:
            errors.append(words.required(name))
        elif problem.code == ENUM:
            supported = [e if isinstance(e, str) else go_json(e) for e in problem.values]
            errors.append(words.not_supported(name, problem.value, supported))
        elif typed and problem.code == TOO_LONG:
            errors.append(words.too_long(name, problem.limit))
        elif typed and problem.code == TOO_MANY:
            errors.append(words.too_many(name, problem.value, problem.limit))
        elif typed and problem.code == TYPE:
            errors.append(words.type_invalid(name, value, problem.message))
        else:
            errors.append(words.invalid(name, value, problem.message))
    return errors
