"""CEL validation rules (`x-kubernetes-validations`) of CustomResourceDefinitions, evaluated
with celpy and the Kubernetes libraries it lacks. The CEL implementation is imported only for a
schema that has rules: it takes most of a second to load, which every `--local` run would pay."""

from __future__ import annotations

from typing import Any

from reconcile.cluster.memory.cel.walk import CEL_SINCE, Schema, has_rules
from reconcile.cluster.memory.validation import fielderrors


def rule_errors(
    schema: Schema, obj: dict[str, Any], old: dict[str, Any] | None, minor: int
) -> list[fielderrors.FieldError]:
    """What `obj` breaks of the rules in its CRD's `schema`, as release 1.`minor` says it."""
    if minor < CEL_SINCE or not has_rules(schema):
        return []
    from reconcile.cluster.memory.cel import validator

    return validator.rule_errors(schema, obj, old, minor)


def not_checked(minor: int) -> fielderrors.FieldError:
    """What the server adds when errors the schema found keep it from running the rules."""
    from reconcile.cluster.memory.cel import validator

    return validator.not_checked(minor)


def rule_definition_errors(schema: Schema, path: str, minor: int) -> list[fielderrors.FieldError]:
    """The errors of every rule in `schema` (an openAPIV3Schema at `path`) in release 1.`minor`."""
    if minor < CEL_SINCE or not has_rules(schema):
        return []
    from reconcile.cluster.memory.cel import crdrules

    return crdrules.rule_definition_errors(schema, path, minor)


__all__ = ["CEL_SINCE", "has_rules", "not_checked", "rule_definition_errors", "rule_errors"]
