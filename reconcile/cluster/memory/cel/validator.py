"""`x-kubernetes-validations` checked on a custom resource as apiextensions-apiserver's
schema/cel/validation.go checks them: each schema node's rules against that node's value (never
a null one), transition rules (`oldSelf`) only where an old value correlates (object fields,
map-list items by key), `messageExpression`, `reason`, `fieldPath`, `optionalOldSelf`, and,
from 1.30, ratcheting: a failed rule on a value the update left unchanged is let through.
"""

from __future__ import annotations

import json
import re
from typing import Any

from celpy import celtypes

from reconcile.cluster.memory.cel import runtime
from reconcile.cluster.memory.cel.cost import LIMIT_EXCEEDED, PER_CALL_LIMIT, RUNTIME_BUDGET
from reconcile.cluster.memory.cel.metered import Meter, evaluate
from reconcile.cluster.memory.cel.program import Compiled, compile_rule
from reconcile.cluster.memory.cel.values import Schema, additional, items, properties, to_cel
from reconcile.cluster.memory.cel.walk import CEL_SINCE, has_rules, rules_of
from reconcile.cluster.memory.golang.printing import GoFloat, go_quote
from reconcile.cluster.memory.validation import fielderrors

MESSAGE_EXPRESSION_SINCE = 27
REASON_AND_FIELD_PATH_SINCE = 28
OPTIONAL_OLD_SELF_SINCE = 30  # the field is dropped while CRDValidationRatcheting is off
RATCHETING_SINCE = 30  # CRDValidationRatcheting beta, on by default
NULL_PRINTED_BARE_SINCE = 34  # apimachinery prints a nil value `null`, before `"null"`
SCALAR_VALUE_SHOWN_SINCE = 35  # a failed rule shows a scalar's value, no longer its type
MAX_MESSAGE_BYTES = 5000
OUT_OF_BUDGET = (
    "validation failed due to running out of cost budget, no further validation rules will be run"
)
WHAT = "checking the object against its CRD's validation rules"
_REASONS = {
    "FieldValueInvalid": "Invalid value",
    "FieldValueForbidden": "Forbidden",
    "FieldValueRequired": "Required value",
    "FieldValueDuplicate": "Duplicate value",
}


def child(path: str | None, name: str) -> str:
    return name if path is None else f"{path}.{name}"


def key(path: str | None, name: str) -> str:
    return f"[{name}]" if path is None else f"{path}[{name}]"


def shown(path: str | None) -> str:
    return "<nil>" if path is None else path


class Validator:
    """One object's rules, within the runtime cost budget the server gives one object: past it
    (or past one call's limit), the server runs no further rule (`stopped`)."""

    def __init__(self, minor: int, *, updating: bool) -> None:
        self.minor = minor
        self.ratcheting = updating and minor >= RATCHETING_SINCE
        self.remaining = RUNTIME_BUDGET
        self.stopped = False

    def node(
        self,
        schema: Schema,
        value: Any,
        old: Any,
        path: str | None,
        *,
        resource_root: bool,
        ratcheted: bool,
    ) -> list[fielderrors.FieldError]:
        if value is None:
            return []
        errors = self.rules(schema, value, old, path, resource_root, ratcheted)
        for branch in schema.get("allOf") or []:
            if self.stopped:
                return errors
            if isinstance(branch, dict) and rules_of(branch):
                node_schema = {**schema, "x-kubernetes-validations": rules_of(branch)}
                errors += self.rules(node_schema, value, old, path, resource_root, False)
        if self.stopped:
            return errors
        if isinstance(value, dict):
            errors += self.fields(schema, value, old if isinstance(old, dict) else None, path,
                                  ratcheted)  # fmt: skip
        elif isinstance(value, list):
            errors += self.elements(schema, value, old if isinstance(old, list) else None, path,
                                    ratcheted)  # fmt: skip
        return errors

    def fields(
        self, schema: Schema, value: dict[str, Any], old: dict[str, Any] | None,
        path: str | None, ratcheted: bool,
    ) -> list[fielderrors.FieldError]:  # fmt: skip
        errors: list[fielderrors.FieldError] = []
        declared = properties(schema)
        extra = additional(schema)
        for name, item in value.items():
            if self.stopped:
                break
            sub = declared.get(name)
            where = child(path, name) if sub is not None else key(path, name)
            sub = sub if sub is not None else extra
            if sub is None or not has_rules(sub):
                continue
            correlated = old is not None and name in old
            old_item = old.get(name) if old is not None else None
            errors += self.node(
                sub, item, old_item, where,
                resource_root=sub.get("x-kubernetes-embedded-resource") is True,
                ratcheted=_equal(item, old_item) if correlated else ratcheted,
            )  # fmt: skip
        return errors

    def elements(
        self, schema: Schema, value: list[Any], old: list[Any] | None, path: str | None,
        ratcheted: bool,
    ) -> list[fielderrors.FieldError]:  # fmt: skip
        item_schema = items(schema)
        if item_schema is None or not has_rules(item_schema):
            return []
        keys = schema.get("x-kubernetes-list-map-keys")
        by_key = schema.get("x-kubernetes-list-type") == "map" and isinstance(keys, list)
        errors: list[fielderrors.FieldError] = []
        for i, item in enumerate(value):
            if self.stopped:
                break
            old_item = (
                _map_list_match(item, old, keys)
                if by_key and old is not None and isinstance(keys, list)
                else None
            )
            errors += self.node(
                item_schema, item, old_item, f"{shown(path)}[{i}]" if path else f"[{i}]",
                resource_root=item_schema.get("x-kubernetes-embedded-resource") is True,
                ratcheted=_equal(item, old_item) if old_item is not None else ratcheted,
            )  # fmt: skip
        return errors

    def rules(
        self, schema: Schema, value: Any, old: Any, path: str | None, resource_root: bool,
        ratcheted: bool,
    ) -> list[fielderrors.FieldError]:  # fmt: skip
        rules = rules_of(schema)
        if not rules:
            return []
        type_name = str(schema.get("type") or "")
        errors: list[fielderrors.FieldError] = []
        if self.remaining <= 0:
            self.stopped = True
            return [fielderrors.invalid_value(shown(path), type_name, OUT_OF_BUDGET)]
        self_value = None
        old_value = None
        for rule in rules:
            source = str(rule.get("rule") or "")
            if not source.strip():
                continue
            optional_old_self = (
                self.minor >= OPTIONAL_OLD_SELF_SINCE and rule.get("optionalOldSelf") is True
            )
            compiled = compile_rule(
                source, schema, self.minor,
                resource_root=resource_root, optional_old_self=optional_old_self,
            )  # fmt: skip
            unrunnable = _unrunnable(compiled, path, type_name, source)
            if unrunnable is not None:
                errors.append(unrunnable)
                continue
            if compiled.uses_old_self and old is None and not optional_old_self:
                continue  # a transition rule: nothing to compare with
            if self_value is None:
                self_value = to_cel(value, schema, resource_root=resource_root)
                old_value = to_cel(old, schema, resource_root=resource_root)
            old_self: Any = old_value
            if optional_old_self:
                old_self = (
                    runtime.Optional(old_value, present=True) if old is not None else runtime.NONE
                )
            variables = {"self": self_value, "oldSelf": old_self}
            meter = Meter(PER_CALL_LIMIT, WHAT)
            result, failure = evaluate(compiled, variables, meter)
            if meter.cost > self.remaining:
                self.stopped = True
                errors.append(fielderrors.invalid_value(shown(path), type_name, OUT_OF_BUDGET))
                return errors
            self.remaining -= meter.cost
            if failure == LIMIT_EXCEEDED:
                self.stopped = True
                errors.append(self.runtime_error(path, type_name, rule, failure))
                return errors
            if failure is not None:
                errors.append(self.runtime_error(path, type_name, rule, failure))
                continue
            if not isinstance(result, celtypes.BoolType):
                errors.append(
                    fielderrors.invalid_value(
                        shown(path), type_name,
                        "rule compile error: cel expression must evaluate to a bool",
                    )
                )  # fmt: skip
                continue
            if bool(result):
                continue
            if self.ratcheting and ratcheted and not compiled.uses_old_self:
                continue  # the server only warns: the value did not change
            errors.append(self.failure(schema, value, path, rule, variables, resource_root))
            if self.stopped:
                return errors
        return errors

    def runtime_error(
        self, path: str | None, type_name: str, rule: dict[str, Any], failure: str
    ) -> fielderrors.FieldError:
        if failure == LIMIT_EXCEEDED:
            detail = (
                f"'{failure}': no further validation rules will be run due to call cost exceeds "
                f"limit for rule: {self.rule_text(rule)}"
            )
        elif failure.startswith("no such overload"):
            detail = (
                f"'{failure}': call arguments did not match a supported operator, function or "
                f"macro signature for rule: {self.rule_text(rule)}"
            )
        else:
            detail = f"{failure} evaluating rule: {self.rule_text(rule)}"
        return fielderrors.invalid_value(shown(path), type_name, detail)

    def rule_text(self, rule: dict[str, Any]) -> str:
        """`ruleErrorString`: the message if there is one, else the rule."""
        message = str(rule.get("message") or "")
        return message.strip() if message else str(rule.get("rule") or "").strip()

    def default_message(self, rule: dict[str, Any]) -> str:
        message = str(rule.get("message") or "")
        if not message:
            return f"failed rule: {self.rule_text(rule)}"
        return message.strip() if self.minor >= MESSAGE_EXPRESSION_SINCE else message

    def failure(
        self, schema: Schema, value: Any, path: str | None, rule: dict[str, Any],
        variables: dict[str, Any], resource_root: bool,
    ) -> fielderrors.FieldError:  # fmt: skip
        where = path
        reason = None
        if self.minor >= REASON_AND_FIELD_PATH_SINCE:
            reason = rule.get("reason")
            relative = normalized_field_path(str(rule.get("fieldPath") or ""), schema)
            if relative:
                where = child(path, relative)
        type_name = str(schema.get("type") or "")
        detail = self.message_of(schema, rule, variables, resource_root)
        if self.stopped:  # the message's evaluation ran out of budget: that is the error
            return fielderrors.invalid_value(shown(where), type_name, detail or "")
        if detail is None:
            detail = self.default_message(rule)
        shown_value: Any = type_name
        has_value = True
        if self.minor >= SCALAR_VALUE_SHOWN_SINCE:
            if type_name in ("object", "array"):
                has_value = False
            else:
                shown_value = GoFloat(value) if isinstance(value, float) else value
        kind = _REASONS.get(str(reason), "Invalid value") if reason else "Invalid value"
        if kind in ("Forbidden", "Required value"):
            return fielderrors.FieldError(shown(where), kind, detail)
        if kind == "Duplicate value":
            return fielderrors.FieldError(shown(where), kind, "", shown_value, has_value=has_value)
        return fielderrors.FieldError(shown(where), kind, detail, shown_value, has_value=has_value)

    def message_of(
        self, schema: Schema, rule: dict[str, Any], variables: dict[str, Any],
        resource_root: bool,
    ) -> str | None:  # fmt: skip
        """The evaluated `messageExpression`, or None where the server falls back to the
        message (it fails, is not a non-empty single line of at most 5000 bytes). Its cost is
        charged to the object's budget; past it, or past one call's limit, the validation
        stops (`stopped`) and what is returned is the error's detail."""
        expression = str(rule.get("messageExpression") or "")
        if self.minor < MESSAGE_EXPRESSION_SINCE or not expression.strip():
            return None
        compiled = compile_rule(
            expression, schema, self.minor, resource_root=resource_root,
            optional_old_self=isinstance(variables.get("oldSelf"), runtime.Optional),
        )  # fmt: skip
        if compiled.error is not None or compiled.unmodelled:
            return None
        meter = Meter(PER_CALL_LIMIT, WHAT)
        result, failure = evaluate(compiled, variables, meter)
        if meter.cost > self.remaining:
            self.stopped = True
            return (
                "messageExpression evaluation failed due to running out of cost budget, no "
                "further validation rules will be run"
            )
        if failure == LIMIT_EXCEEDED:
            self.stopped = True
            return (
                "no further validation rules will be run due to call cost exceeds limit for "
                f"messageExpression: {go_quote(expression)}"
            )
        self.remaining -= meter.cost
        if failure is not None or not isinstance(result, str):
            return None
        text = str(result).strip()
        if not text or "\n" in text or len(text.encode()) > MAX_MESSAGE_BYTES:
            return None
        return text


def _equal(new: Any, old: Any) -> bool:
    return json.dumps(new, sort_keys=True) == json.dumps(old, sort_keys=True)


def _map_list_match(item: Any, old: list[Any], keys: list[Any]) -> Any:
    if not isinstance(item, dict):
        return None
    wanted = [item.get(k) for k in keys]
    for candidate in old:
        if isinstance(candidate, dict) and [candidate.get(k) for k in keys] == wanted:
            return candidate
    return None


_PATH_TOKEN = re.compile(r"\.([^.\[\]]+)|\['((?:[^'\\]|\\.)*)'\]")


def normalized_field_path(text: str, schema: Schema) -> str | None:
    """`ValidFieldPath`: a rule's `fieldPath` (`.spec.x`, `['a.b']`) as a field path relative
    to the rule's node, or None when it names no field of the schema."""
    if not text:
        return None
    position, parts = 0, list[str]()
    current: Schema | None = schema
    while position < len(text):
        match = _PATH_TOKEN.match(text, position)
        if match is None or current is None:
            return None
        name = match.group(1) if match.group(1) is not None else _unescape(match.group(2))
        declared = properties(current)
        if declared:
            if name not in declared:
                return None
            parts.append(("." if parts else "") + name)
            current = declared[name]
        elif additional(current) is not None:
            parts.append(f"[{name}]")
            current = additional(current)
        else:
            return None
        position = match.end()
    return "".join(parts)


def _unescape(text: str) -> str:
    escapes = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
    return re.sub(r"\\(.)", lambda m: escapes.get(m.group(1), m.group(1)), text)


def rule_errors(
    schema: Schema, obj: dict[str, Any], old: dict[str, Any] | None, minor: int
) -> list[fielderrors.FieldError]:
    """What `obj` breaks of the rules in its CRD's `schema`, as release 1.`minor` says it."""
    if minor < CEL_SINCE or not has_rules(schema):
        return []
    validator = Validator(minor, updating=old is not None)
    return validator.node(
        schema, obj, old, None, resource_root=True,
        ratcheted=old is not None and _equal(obj, old),
    )  # fmt: skip


def not_checked(minor: int) -> fielderrors.FieldError:
    """What the server adds when errors the schema found keep it from running the rules."""
    value: Any = fielderrors.GoLiteral("null") if minor >= NULL_PRINTED_BARE_SINCE else "null"
    return fielderrors.invalid_value(
        "<nil>",
        value,
        "some validation rules were not checked because the object was invalid; correct the "
        "existing errors to complete validation",
    )


__all__ = ["Compiled", "not_checked", "rule_errors"]


def _unrunnable(
    compiled: Compiled, path: str | None, type_name: str, source: str
) -> fielderrors.FieldError | None:
    """Why a rule cannot run: it does not compile, or it calls what --local does not model."""
    if compiled.error is not None:
        return fielderrors.invalid_value(
            shown(path), type_name, f"rule compile error: {compiled.error}"
        )
    if compiled.unmodelled:
        names = ", ".join(sorted(set(compiled.unmodelled)))
        return fielderrors.invalid_value(
            shown(path), type_name,
            f"rule not evaluated: {names} not modelled by --local: {source.strip()}",
        )  # fmt: skip
    return None
