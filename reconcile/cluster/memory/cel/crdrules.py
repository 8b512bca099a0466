"""A CRD's `x-kubernetes-validations` checked as the API server checks them when the CRD is
created or updated (apiextensions' validation.go): each rule present and single-line or with a
message, a supported `reason`, a `fieldPath` naming a field, the rule compiling in the
release's CEL environment, `oldSelf` only where old values correlate, `optionalOldSelf` only
with `oldSelf`. The estimated cost limits are not checked."""

from __future__ import annotations

import json
from typing import Any

from reconcile.cluster.memory import validation as v
from reconcile.cluster.memory.cel.program import compile_rule
from reconcile.cluster.memory.cel.validator import (
    MESSAGE_EXPRESSION_SINCE,
    OPTIONAL_OLD_SELF_SINCE,
    REASON_AND_FIELD_PATH_SINCE,
    normalized_field_path,
)
from reconcile.cluster.memory.cel.walk import (
    CEL_SINCE,
    Schema,
    additional,
    items,
    properties,
    rules_of,
)

_REASONS = ["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"]
_JSON_SINCE = 34  # apimachinery prints a struct value as JSON, before with Go's %#v


def rule_definition_errors(schema: Schema, path: str, minor: int) -> list[v.FieldError]:
    """The errors of every rule in `schema` (an openAPIV3Schema at `path`)."""
    if minor < CEL_SINCE:
        return []  # `x-kubernetes-validations` is not a field the release knows
    return _node(schema, path, minor, resource_root=True, uncorrelatable=None)


def _node(
    schema: Schema, path: str, minor: int, *, resource_root: bool, uncorrelatable: str | None
) -> list[v.FieldError]:
    errors = _rules(schema, path, minor, resource_root, uncorrelatable)
    for name, sub in properties(schema).items():
        errors += _node(
            sub, f"{path}.properties[{name}]", minor,
            resource_root=sub.get("x-kubernetes-embedded-resource") is True,
            uncorrelatable=uncorrelatable,
        )  # fmt: skip
    extra = additional(schema)
    if extra is not None:
        errors += _node(
            extra, f"{path}.additionalProperties", minor,
            resource_root=extra.get("x-kubernetes-embedded-resource") is True,
            uncorrelatable=uncorrelatable,
        )  # fmt: skip
    item = items(schema)
    if item is not None:
        if uncorrelatable is None and schema.get("x-kubernetes-list-type") != "map":
            uncorrelatable = path
        errors += _node(
            item, f"{path}.items", minor,
            resource_root=item.get("x-kubernetes-embedded-resource") is True,
            uncorrelatable=uncorrelatable,
        )  # fmt: skip
    return errors


def _rules(
    schema: Schema, path: str, minor: int, resource_root: bool, uncorrelatable: str | None
) -> list[v.FieldError]:
    errors: list[v.FieldError] = []
    for i, rule in enumerate(rules_of(schema)):
        where = f"{path}.x-kubernetes-validations[{i}]"
        source = str(rule.get("rule") or "")
        message = str(rule.get("message") or "")
        if not source.strip():
            errors.append(v.required(f"{where}.rule", "rule is not specified"))
        elif message and not message.strip():
            errors.append(
                v.invalid_value(f"{where}.message", message, "must be non-empty if specified")
            )
        elif "\n" in message.strip():
            errors.append(
                v.invalid_value(f"{where}.message", message, "must not contain line breaks")
            )
        elif "\n" in source.strip() and not message.strip():
            errors.append(
                v.required(
                    f"{where}.message", "message must be specified if rule contains line breaks"
                )
            )
        if minor >= REASON_AND_FIELD_PATH_SINCE:
            errors += _reason_and_path_errors(rule, schema, where)
        if errors or not source.strip():
            continue
        optional = minor >= OPTIONAL_OLD_SELF_SINCE and rule.get("optionalOldSelf") is True
        compiled = compile_rule(
            source, schema, minor, resource_root=resource_root, optional_old_self=optional
        )
        if compiled.error is not None:
            errors.append(v.invalid_value(f"{where}.rule", _go_rule(rule, minor), compiled.error))
            continue
        expression = str(rule.get("messageExpression") or "")
        if minor >= MESSAGE_EXPRESSION_SINCE and expression.strip():
            message_compiled = compile_rule(
                expression, schema, minor, resource_root=resource_root, optional_old_self=optional
            )
            if message_compiled.error is not None:
                errors.append(
                    v.invalid_value(
                        f"{where}.messageExpression", _go_rule(rule, minor),
                        "messageExpression " + message_compiled.error,
                    )
                )  # fmt: skip
        if compiled.uses_old_self and uncorrelatable is not None:
            errors.append(
                v.invalid_value(
                    f"{where}.rule", source,
                    f"oldSelf cannot be used on the uncorrelatable portion of the schema within "
                    f"{uncorrelatable}",
                )
            )  # fmt: skip
        elif (
            not compiled.uses_old_self
            and minor >= OPTIONAL_OLD_SELF_SINCE
            and isinstance(rule.get("optionalOldSelf"), bool)
        ):
            errors.append(
                v.invalid_value(
                    f"{where}.optionalOldSelf", rule["optionalOldSelf"],
                    "may not be set if oldSelf is not used in rule",
                )
            )  # fmt: skip
    return errors


def _reason_and_path_errors(rule: dict[str, Any], schema: Schema, where: str) -> list[v.FieldError]:
    errors: list[v.FieldError] = []
    reason = rule.get("reason")
    if reason is not None and reason not in _REASONS:
        errors.append(v.unsupported(f"{where}.reason", reason, _REASONS))
    field_path = rule.get("fieldPath")
    if isinstance(field_path, str) and field_path:
        if not field_path.strip():
            errors.append(
                v.invalid_value(f"{where}.fieldPath", field_path, "must be non-empty if specified")
            )
        if "\n" in field_path:
            errors.append(
                v.invalid_value(f"{where}.fieldPath", field_path, "must not contain line breaks")
            )
        elif normalized_field_path(field_path, schema) is None:
            errors.append(v.invalid_value(f"{where}.fieldPath", field_path, "must be a valid path"))
    return errors


def _go_rule(rule: dict[str, Any], minor: int) -> v.GoLiteral:
    """How the server prints the `ValidationRule` it refuses."""
    fields = [
        ("Rule", "rule", str(rule.get("rule") or "")),
        ("Message", "message", str(rule.get("message") or "")),
    ]
    if minor >= MESSAGE_EXPRESSION_SINCE:
        fields.append(
            ("MessageExpression", "messageExpression", str(rule.get("messageExpression") or ""))
        )
    if minor >= _JSON_SINCE:
        shown: dict[str, Any] = {"rule": fields[0][2]}
        for _, key, value in fields[1:]:
            if value:
                shown[key] = value
        for key in ("reason", "fieldPath", "optionalOldSelf"):
            if rule.get(key) not in (None, ""):
                shown[key] = rule[key]
        return v.GoLiteral(json.dumps(shown, separators=(",", ":")))
    parts = [f"{name}:{json.dumps(value)}" for name, _, value in fields]
    if minor >= REASON_AND_FIELD_PATH_SINCE:
        reason_set = rule.get("reason") is not None
        parts.append("Reason:(*apiextensions.FieldValueErrorReason)(nil)" if not reason_set
                     else "Reason:(*apiextensions.FieldValueErrorReason)(0x0)")  # fmt: skip
        parts.append(f"FieldPath:{json.dumps(str(rule.get('fieldPath') or ''))}")
    if minor >= 29:
        parts.append("OptionalOldSelf:(*bool)(nil)" if rule.get("optionalOldSelf") is None
                     else "OptionalOldSelf:(*bool)(0x0)")  # fmt: skip
    return v.GoLiteral("apiextensions.ValidationRule{" + ", ".join(parts) + "}")
