"""apimachinery's field errors (pkg/util/validation/field): one `FieldError` per problem,
raised together as one `Invalid` formatted like `NewInvalid` (`ConfigMap "x" is invalid:
metadata.name: Invalid value: ...`), and worded as each release words them: the value each
prints, the `Too long`/`Too many` details, the supported values.

- 1.24 (apimachinery aacfc8af, 611d116e) added `TypeInvalid` (printed as `Invalid value`, reason
  `FieldValueTypeInvalid`), `TooLongMaxLength` (`Too long: may not be longer than 5`) and a
  `TooMany` that may omit its count.
- 1.32 (51cdbebd, "Kill TooLongMaxLength() in favor of TooLong()"): `Too long: may not be
  more than 5 bytes`.
- 1.34 (c58e197e, "Nicer value rendering in API errors"): a value that is not a string, number
  or boolean is printed as JSON (`null`, `{"a":1}`) where it was Go's `%#v` (`"null"`,
  `map[string]interface {}{"a":1}`); and `TooLong`/`TooMany` say `1 byte`/`1 item`.
"""

from __future__ import annotations

import json
from typing import Any

from reconcile.cluster.errors import Invalid
from reconcile.cluster.memory.golang.printing import go_float, go_json, go_quote, go_sharp
from reconcile.cluster.types import ResourceInfo
from reconcile.records import dataclass


@dataclass(frozen=True)
class FieldError:
    """One `field.Error`: `type` is the human form (`Invalid value`, `Required value`, ...)."""

    field: str
    type: str
    detail: str = ""
    value: Any = None
    has_value: bool = False
    # the cause's reason where the printed type does not tell it: a `TypeInvalid` error
    # prints as `Invalid value` but its reason is `FieldValueTypeInvalid`
    server_reason: str = ""

    @property
    def reason(self) -> str:
        if self.server_reason:
            return self.server_reason
        return {
            "Invalid value": "FieldValueInvalid",
            "Required value": "FieldValueRequired",
            "Forbidden": "FieldValueForbidden",
            "Unsupported value": "FieldValueNotSupported",
            "Duplicate value": "FieldValueDuplicate",
            "Too long": "FieldValueTooLong",
            "Too many": "FieldValueTooMany",
        }.get(self.type, "FieldValueInvalid")

    def body(self, minor: int | None = None) -> str:
        """The error's text as release 1.`minor` prints it (None: as 1.20 did)."""
        text = self.type
        if self.has_value:
            text += f": {_go_value(self.value, minor)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def text(self, minor: int | None = None) -> str:
        return f"{self.field}: {self.body(minor)}"

    def __str__(self) -> str:
        return self.text()


def invalid_value(field: str, value: Any, detail: str) -> FieldError:
    return FieldError(field, "Invalid value", detail, value, has_value=True)


def required(field: str, detail: str = "") -> FieldError:
    return FieldError(field, "Required value", detail)


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError(field, "Forbidden", detail)


def unsupported(field: str, value: Any, supported: list[str]) -> FieldError:
    detail = "supported values: " + ", ".join(f'"{s}"' for s in supported)
    return FieldError(field, "Unsupported value", detail, value, has_value=True)


class GoLiteral(str):
    """A value already written as Go prints it in a field error."""


# From 1.32 (apimachinery 51cdbebd) `field.TooLong` says "may not be more than N bytes" where
# it said "must have at most N bytes"; from 1.34, "1 byte".
TOO_LONG_IN_BYTES_SINCE = 32


def too_long_bytes(field: str, limit: int, minor: int | None) -> FieldError:
    """`field.TooLong(field, "", limit)` as release 1.`minor` words it (None: 1.20)."""
    if minor is None or minor < TOO_LONG_IN_BYTES_SINCE:
        return FieldError(field, "Too long", f"must have at most {limit} bytes")
    unit = "byte" if limit == 1 and minor >= JSON_VALUES_SINCE else "bytes"
    return FieldError(field, "Too long", f"may not be more than {limit} {unit}")


# From 1.34 (apimachinery c58e197e, "Nicer value rendering in API errors") a list or map is
# printed as JSON where it was Go's `%#v` (`[]string{"a"}`, `map[string]string{"k":"v"}`).
JSON_VALUES_SINCE = 34


def _go_value(value: Any, minor: int | None = None) -> str:
    """Roughly how Go's `%#v` / `%q` (or, from 1.34, JSON) print the offending value in field
    errors."""
    if isinstance(value, GoLiteral):
        return str(value)
    if minor is not None and minor >= JSON_VALUES_SINCE and isinstance(value, list | dict):
        return _compact_json(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return "[]string{" + ", ".join(json.dumps(item) for item in value) + "}"
    if isinstance(value, dict) and all(isinstance(item, str) for item in value.values()):
        pairs = ", ".join(f"{json.dumps(k)}:{json.dumps(value[k])}" for k in sorted(value))
        return "map[string]string{" + pairs + "}"
    return json.dumps(value, sort_keys=True, default=str)


def _compact_json(value: Any) -> str:
    """`json.Marshal`'s text: a map's keys sorted (a Go map), other objects as written (a Go
    struct's fields in their declared order, which the body's order follows)."""
    if isinstance(value, dict):
        keys = sorted(value) if all(isinstance(v, str) for v in value.values()) else list(value)
        return "{" + ",".join(f"{json.dumps(k)}:{_compact_json(value[k])}" for k in keys) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_compact_json(item) for item in value) + "]"
    return json.dumps(value, default=str)


def qualified_kind(resource: ResourceInfo) -> str:
    """`Deployment.apps`, `ConfigMap`: how `NewInvalid` names the kind."""
    return f"{resource.kind}.{resource.group}" if resource.group else resource.kind


def raise_invalid(
    resource: ResourceInfo, name: str, errors: list[FieldError], minor: int | None = None
) -> None:
    """Raise one `Invalid` for all `errors` (no-op when there are none), worded as release
    1.`minor` words them (None: as 1.20 did)."""
    if not errors:
        return
    texts = [e.text(minor) for e in errors]
    aggregate = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    raise Invalid(
        f'{qualified_kind(resource)} "{name}" is invalid: {aggregate}',
        details={
            "name": name,
            "group": resource.group,
            "kind": resource.kind,
            "causes": [
                {"reason": e.reason, "message": e.body(minor), "field": e.field} for e in errors
            ],
        },
    )


def duplicate(field: str, value: Any) -> FieldError:
    return FieldError(field, "Duplicate value", "", value, has_value=True)


TYPED_ERRORS_SINCE = 24


@dataclass(frozen=True)
class FieldWording:
    """The field-error constructors of release 1.`minor`."""

    minor: int

    def shown(self, value: Any) -> GoLiteral:
        """The bad value as `ErrorBody` prints it."""
        if isinstance(value, GoLiteral):
            return value
        if isinstance(value, str):
            return GoLiteral(go_quote(value))
        if isinstance(value, bool):
            return GoLiteral("true" if value else "false")
        if isinstance(value, float):
            return GoLiteral(go_float(value))
        if isinstance(value, int):
            return GoLiteral(str(value))
        if self.minor >= JSON_VALUES_SINCE:
            return GoLiteral(go_json(value))
        if value is None:
            return GoLiteral('"null"')  # nil became the string "null", then `%q`
        return GoLiteral(go_sharp(value))

    def invalid(self, field: str, value: Any, detail: str) -> FieldError:
        return FieldError(field, "Invalid value", detail, self.shown(value), has_value=True)

    def type_invalid(self, field: str, value: Any, detail: str) -> FieldError:
        if self.minor < TYPED_ERRORS_SINCE:
            return self.invalid(field, value, detail)
        return FieldError(
            field,
            "Invalid value",
            detail,
            self.shown(value),
            has_value=True,
            server_reason="FieldValueTypeInvalid",
        )

    def required(self, field: str, detail: str = "") -> FieldError:
        return FieldError(field, "Required value", detail)

    def not_supported(self, field: str, value: Any, supported: list[str]) -> FieldError:
        detail = "supported values: " + ", ".join(go_quote(s) for s in supported)
        return FieldError(
            field, "Unsupported value", detail if supported else "", self.shown(value), True
        )

    def duplicate(self, field: str, value: Any) -> FieldError:
        return FieldError(field, "Duplicate value", "", self.shown(value), has_value=True)

    def too_long(self, field: str, max_length: int) -> FieldError:
        """`TooLongMaxLength` until 1.32, then `TooLong`: the value is never shown."""
        if max_length < 0:
            return FieldError(field, "Too long", "value is too long")
        if self.minor < TOO_LONG_IN_BYTES_SINCE:
            return FieldError(field, "Too long", f"may not be longer than {max_length}")
        return too_long_bytes(field, max_length, self.minor)

    def too_many(self, field: str, actual: int, max_quantity: int) -> FieldError:
        if max_quantity < 0:
            detail = "has too many items"
        else:
            detail = f"must have at most {max_quantity} {self._plural(max_quantity, 'item')}"
        if actual < 0:
            return FieldError(field, "Too many", detail)
        return FieldError(field, "Too many", detail, self.shown(actual), has_value=True)

    def _plural(self, count: int, noun: str) -> str:
        return noun if count == 1 and self.minor >= JSON_VALUES_SINCE else noun + "s"
