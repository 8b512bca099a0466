"""A CRD's `x-kubernetes-validations` checked as the API server checks them when the CRD is
created or updated (apiextensions' validation.go): each rule present and single-line or with a
message, a supported `reason`, a `fieldPath` naming a field, the rule compiling in the
release's CEL environment, `oldSelf` only where old values correlate, `optionalOldSelf` only
with `oldSelf`, and the estimated cost limits: a rule's worst-case cost (`estimate`), times the
number of times its node can occur in one object, at most 10,000,000; a `messageExpression`'s
at most as much; all of a CRD's rules together at most 100,000,000, the most expensive named."""

from __future__ import annotations

import json
from typing import Any

from reconcile.budget import checkpoint
from reconcile.cluster.memory.cel.cost import (
    MAX_UINT64,
    STATIC_CRD_LIMIT,
    STATIC_RULE_LIMIT,
    exceeds_message,
)
from reconcile.cluster.memory.cel.decltypes import (
    Decl,
    child_cardinality,
    decl_type,
    min_cardinality_bound,
    times_cardinality,
)
from reconcile.cluster.memory.cel.estimate import rule_cost
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
from reconcile.cluster.memory.golang.printing import go_json
from reconcile.cluster.memory.validation import fielderrors
from reconcile.records import dataclass

_REASONS = ["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"]
_JSON_SINCE = 34  # apimachinery prints a struct value as JSON, before with Go's %#v


class _Costs:
    """TotalCost: the estimated cost of all of a CRD's rules, and the most expensive of them
    (those of at least 1% of the CRD's limit, the four dearest first)."""

    def __init__(self) -> None:
        self.total = 0
        self.dearest: list[tuple[int, str]] = []

    def observe(self, where: str, amount: int) -> None:
        self.total = min(self.total + amount, MAX_UINT64)
        if amount >= STATIC_CRD_LIMIT // 100:
            self.dearest.append((amount, where))
            self.dearest.sort(key=lambda entry: -entry[0])  # stable, as Go's sort.Slice is not
            del self.dearest[4:]

    def errors(self, path: str) -> list[fielderrors.FieldError]:
        if self.total <= STATIC_CRD_LIMIT:
            return []
        found = [
            fielderrors.forbidden(
                where,
                "contributed to estimated rule cost total exceeding cost limit for entire "
                "OpenAPIv3 schema",
            )
            for _, where in self.dearest
        ]
        what = "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema"
        found.append(
            fielderrors.forbidden(path, exceeds_message(what, self.total, STATIC_CRD_LIMIT))
        )
        return found


@dataclass
class _Node:
    """Where a schema node is: its path, whether it is a resource's root, the list above it
    whose items cannot be correlated (oldSelf), and how many times it can occur (None:
    unbounded by maxItems/maxProperties above it)."""

    path: str
    resource_root: bool
    uncorrelatable: str | None
    cardinality: int | None


def rule_definition_errors(schema: Schema, path: str, minor: int) -> list[fielderrors.FieldError]:
    """The errors of every rule in `schema` (an openAPIV3Schema at `path`)."""
    if minor < CEL_SINCE:
        return []  # `x-kubernetes-validations` is not a field the release knows
    costs = _Costs()
    errors = _node(schema, _Node(path, True, None, 1), minor, costs)
    return errors + costs.errors(path)


def _node(schema: Schema, at: _Node, minor: int, costs: _Costs) -> list[fielderrors.FieldError]:
    errors = _rules(schema, at, minor, costs)
    below = child_cardinality(schema, at.cardinality)
    for name, sub in properties(schema).items():
        where = _Node(f"{at.path}.properties[{name}]", _embedded(sub), at.uncorrelatable, below)
        errors += _node(sub, where, minor, costs)
    extra = additional(schema)
    if extra is not None:
        where = _Node(f"{at.path}.additionalProperties", _embedded(extra), at.uncorrelatable, below)
        errors += _node(extra, where, minor, costs)
    item = items(schema)
    if item is not None:
        uncorrelatable = at.uncorrelatable
        if uncorrelatable is None and schema.get("x-kubernetes-list-type") != "map":
            uncorrelatable = at.path
        errors += _node(item, _Node(f"{at.path}.items", _embedded(item), uncorrelatable, below),
                        minor, costs)  # fmt: skip
    return errors


def _embedded(schema: Schema) -> bool:
    return schema.get("x-kubernetes-embedded-resource") is True


def _rules(schema: Schema, at: _Node, minor: int, costs: _Costs) -> list[fielderrors.FieldError]:
    path, resource_root, uncorrelatable = at.path, at.resource_root, at.uncorrelatable
    declared = decl_type(schema, resource_root) if rules_of(schema) else None
    errors: list[fielderrors.FieldError] = []
    for i, rule in enumerate(rules_of(schema)):
        checkpoint("checking a CRD's validation rules")  # a CRD may hold thousands
        where = f"{path}.x-kubernetes-validations[{i}]"
        source = str(rule.get("rule") or "")
        errors += _text_errors(source, str(rule.get("message") or ""), where)
        if minor >= REASON_AND_FIELD_PATH_SINCE:
            errors += _reason_and_path_errors(rule, schema, where)
        if errors or not source.strip():
            continue
        optional = minor >= OPTIONAL_OLD_SELF_SINCE and rule.get("optionalOldSelf") is True
        compiled = compile_rule(
            source, schema, minor, resource_root=resource_root, optional_old_self=optional
        )
        if compiled.error is not None:
            errors.append(
                fielderrors.invalid_value(f"{where}.rule", _go_rule(rule, minor), compiled.error)
            )
            if minor >= OPTIONAL_OLD_SELF_SINCE and isinstance(rule.get("optionalOldSelf"), bool):
                # the server's next check sees no oldSelf in a rule that did not compile
                errors.append(_optional_without_old_self(rule, where))
            continue
        if declared is not None and compiled.tree is not None:
            errors += _rule_cost_errors(compiled.tree, declared, optional, at, where, costs)
        expression = str(rule.get("messageExpression") or "")
        if minor >= MESSAGE_EXPRESSION_SINCE and expression.strip():
            message_compiled = compile_rule(
                expression, schema, minor, resource_root=resource_root, optional_old_self=optional
            )
            if message_compiled.error is not None:
                errors.append(
                    fielderrors.invalid_value(
                        f"{where}.messageExpression", _go_rule(rule, minor),
                        "messageExpression " + message_compiled.error,
                    )
                )  # fmt: skip
            elif declared is not None and message_compiled.tree is not None:
                message_cost = rule_cost(message_compiled.tree, declared, optional)
                if message_cost > STATIC_RULE_LIMIT:
                    what = "estimated messageExpression cost"
                    detail = exceeds_message(what, message_cost, STATIC_RULE_LIMIT)
                    errors.append(fielderrors.forbidden(f"{where}.messageExpression", detail))
                costs.observe(f"{where}.messageExpression", message_cost)
        if compiled.uses_old_self and uncorrelatable is not None:
            errors.append(
                fielderrors.invalid_value(
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
            errors.append(_optional_without_old_self(rule, where))
    return errors


def _text_errors(source: str, message: str, where: str) -> list[fielderrors.FieldError]:
    """The rule present, and a message where one must be: the first problem of the two."""
    if not source.strip():
        return [fielderrors.required(f"{where}.rule", "rule is not specified")]
    if message and not message.strip():
        return [
            fielderrors.invalid_value(f"{where}.message", message, "must be non-empty if specified")
        ]
    if "\n" in message.strip():
        return [
            fielderrors.invalid_value(f"{where}.message", message, "must not contain line breaks")
        ]
    if "\n" in source.strip() and not message.strip():
        return [
            fielderrors.required(
                f"{where}.message", "message must be specified if rule contains line breaks"
            )
        ]
    return []


def _optional_without_old_self(rule: dict[str, Any], where: str) -> fielderrors.FieldError:
    return fielderrors.invalid_value(
        f"{where}.optionalOldSelf",
        rule["optionalOldSelf"],
        "may not be set if oldSelf is not used in rule",
    )


def _rule_cost_errors(
    tree: Any, declared: Decl, optional: bool, at: _Node, where: str, costs: _Costs
) -> list[fielderrors.FieldError]:
    """A rule's estimated cost times the times its node can occur: over the limit, refused."""
    cardinality = at.cardinality
    if cardinality is None:
        cardinality = min_cardinality_bound(declared)
    expression_cost = times_cardinality(rule_cost(tree, declared, optional), cardinality)
    costs.observe(f"{where}.rule", expression_cost)
    if expression_cost <= STATIC_RULE_LIMIT:
        return []
    detail = exceeds_message("estimated rule cost", expression_cost, STATIC_RULE_LIMIT)
    return [fielderrors.forbidden(f"{where}.rule", detail)]


def _reason_and_path_errors(
    rule: dict[str, Any], schema: Schema, where: str
) -> list[fielderrors.FieldError]:
    errors: list[fielderrors.FieldError] = []
    reason = rule.get("reason")
    if reason is not None and reason not in _REASONS:
        errors.append(fielderrors.unsupported(f"{where}.reason", reason, _REASONS))
    field_path = rule.get("fieldPath")
    if isinstance(field_path, str) and field_path:
        if not field_path.strip():
            errors.append(
                fielderrors.invalid_value(
                    f"{where}.fieldPath", field_path, "must be non-empty if specified"
                )
            )
        if "\n" in field_path:
            errors.append(
                fielderrors.invalid_value(
                    f"{where}.fieldPath", field_path, "must not contain line breaks"
                )
            )
        elif normalized_field_path(field_path, schema) is None:
            errors.append(
                fielderrors.invalid_value(f"{where}.fieldPath", field_path, "must be a valid path")
            )
    return errors


def _go_rule(rule: dict[str, Any], minor: int) -> fielderrors.GoLiteral:
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
        # encoding/json of the internal type, which has no json tags: Go's field names, all of
        # them, in order, HTML-escaped (`>` as \u003e)
        reason = rule.get("reason")
        optional = rule.get("optionalOldSelf")
        shown = [
            *((name, value) for name, _, value in fields),
            ("Reason", reason if isinstance(reason, str) else None),
            ("FieldPath", str(rule.get("fieldPath") or "")),
            ("OptionalOldSelf", optional if isinstance(optional, bool) else None),
        ]
        return fielderrors.GoLiteral(
            "{" + ",".join(f'"{name}":{go_json(value)}' for name, value in shown) + "}"
        )
    parts = [f"{name}:{json.dumps(value)}" for name, _, value in fields]
    if minor >= REASON_AND_FIELD_PATH_SINCE:
        reason_set = rule.get("reason") is not None
        parts.append("Reason:(*apiextensions.FieldValueErrorReason)(nil)" if not reason_set
                     else "Reason:(*apiextensions.FieldValueErrorReason)(0x0)")  # fmt: skip
        parts.append(f"FieldPath:{json.dumps(str(rule.get('fieldPath') or ''))}")
    if minor >= 29:
        parts.append("OptionalOldSelf:(*bool)(nil)" if rule.get("optionalOldSelf") is None
                     else "OptionalOldSelf:(*bool)(0x0)")  # fmt: skip
    return fielderrors.GoLiteral("apiextensions.ValidationRule{" + ", ".join(parts) + "}")
