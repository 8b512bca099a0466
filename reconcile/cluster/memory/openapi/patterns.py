"""OpenAPI `pattern`s of a CRD's schema as kube-apiserver reads them (Go's regexp: `golang.regexp`).
A pattern Go cannot compile is refused when its CRD is created, in Go's words, as the server's
structural schema validation refuses it; where a stored one meets a value, the value's error
says the pattern is invalid."""

from __future__ import annotations

from typing import Any

from reconcile.budget import checkpoint
from reconcile.cluster.memory.golang.regexp import compiled
from reconcile.cluster.memory.validation import fielderrors

_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf")


def pattern_definition_errors(
    schema: Any, path: str, minor: int | None = None
) -> list[fielderrors.FieldError]:
    """Every `pattern` of a CRD's schema that Go cannot compile, as the API server of release
    1.`minor` refuses them (by path, as it lists them)."""
    errors: list[fielderrors.FieldError] = []
    _walk(schema, path, minor, errors)
    return sorted(errors, key=lambda e: e.field)


def _walk(schema: Any, path: str, minor: int | None, errors: list[fielderrors.FieldError]) -> None:
    if not isinstance(schema, dict):
        return
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and pattern:
        checkpoint("checking a CRD's patterns")
        _, error = compiled(pattern, minor)
        if error is not None:
            errors.append(
                fielderrors.invalid_value(
                    f"{path}.pattern",
                    pattern,
                    f"must be a valid regular expression, but isn't: {error}",
                )
            )
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for name, sub in properties.items():
            _walk(sub, f"{path}.properties[{name}]", minor, errors)
    for key in ("additionalProperties", "items", "not"):
        _walk(schema.get(key), f"{path}.{key}", minor, errors)
    for key in _SCHEMA_LISTS:
        branches = schema.get(key)
        if isinstance(branches, list):
            for i, branch in enumerate(branches):
                _walk(branch, f"{path}.{key}[{i}]", minor, errors)
