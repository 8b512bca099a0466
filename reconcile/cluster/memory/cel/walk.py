"""The parts of a schema its rules can sit in, and whether any does: light (no CEL
implementation imported), so a schema without rules never loads one."""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]

CEL_SINCE = 25  # beta, on by default (CustomResourceValidationExpressions); GA in 1.29


def properties(schema: Schema) -> dict[str, Schema]:
    found = schema.get("properties")
    if not isinstance(found, dict):
        return {}
    return {k: s for k, s in found.items() if isinstance(s, dict)}


def additional(schema: Schema) -> Schema | None:
    found = schema.get("additionalProperties")
    return found if isinstance(found, dict) else None


def items(schema: Schema) -> Schema | None:
    found = schema.get("items")
    return found if isinstance(found, dict) else None


def rules_of(schema: Schema) -> list[dict[str, Any]]:
    found = schema.get("x-kubernetes-validations")
    return [r for r in found if isinstance(r, dict)] if isinstance(found, list) else []


def has_rules(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    if rules_of(schema):
        return True
    children = [*properties(schema).values(), additional(schema), items(schema)]
    return any(has_rules(child) for child in children)
