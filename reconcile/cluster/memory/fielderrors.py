"""apimachinery's field errors (pkg/util/validation/field/errors.go) worded as each release
words them: the value each prints, the `Too long`/`Too many` details, the supported values.

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

from dataclasses import dataclass
from typing import Any

from reconcile.cluster.memory import validation as v
from reconcile.cluster.memory.gofmt import go_float, go_json, go_quote, go_sharp

TYPED_ERRORS_SINCE = 24
TOO_LONG_IN_BYTES_SINCE = v.TOO_LONG_IN_BYTES_SINCE
JSON_VALUES_SINCE = v.JSON_VALUES_SINCE


@dataclass(frozen=True)
class FieldWording:
    """The field-error constructors of release 1.`minor`."""

    minor: int

    def shown(self, value: Any) -> v.GoLiteral:
        """The bad value as `ErrorBody` prints it."""
        if isinstance(value, v.GoLiteral):
            return value
        if isinstance(value, str):
            return v.GoLiteral(go_quote(value))
        if isinstance(value, bool):
            return v.GoLiteral("true" if value else "false")
        if isinstance(value, float):
            return v.GoLiteral(go_float(value))
        if isinstance(value, int):
            return v.GoLiteral(str(value))
        if self.minor >= JSON_VALUES_SINCE:
            return v.GoLiteral(go_json(value))
        if value is None:
            return v.GoLiteral('"null"')  # nil became the string "null", then `%q`
        return v.GoLiteral(go_sharp(value))

    def invalid(self, field: str, value: Any, detail: str) -> v.FieldError:
        return v.FieldError(field, "Invalid value", detail, self.shown(value), has_value=True)

    def type_invalid(self, field: str, value: Any, detail: str) -> v.FieldError:
        if self.minor < TYPED_ERRORS_SINCE:
            return self.invalid(field, value, detail)
        return v.FieldError(
            field,
            "Invalid value",
            detail,
            self.shown(value),
            has_value=True,
            server_reason="FieldValueTypeInvalid",
        )

    def required(self, field: str, detail: str = "") -> v.FieldError:
        return v.FieldError(field, "Required value", detail)

    def not_supported(self, field: str, value: Any, supported: list[str]) -> v.FieldError:
        detail = "supported values: " + ", ".join(go_quote(s) for s in supported)
        return v.FieldError(
            field, "Unsupported value", detail if supported else "", self.shown(value), True
        )

    def duplicate(self, field: str, value: Any) -> v.FieldError:
        return v.FieldError(field, "Duplicate value", "", self.shown(value), has_value=True)

    def too_long(self, field: str, max_length: int) -> v.FieldError:
        """`TooLongMaxLength` until 1.32, then `TooLong`: the value is never shown."""
        if max_length < 0:
            return v.FieldError(field, "Too long", "value is too long")
        if self.minor < TOO_LONG_IN_BYTES_SINCE:
            return v.FieldError(field, "Too long", f"may not be longer than {max_length}")
        return v.too_long_bytes(field, max_length, self.minor)

    def too_many(self, field: str, actual: int, max_quantity: int) -> v.FieldError:
        if max_quantity < 0:
            detail = "has too many items"
        else:
            detail = f"must have at most {max_quantity} {self._plural(max_quantity, 'item')}"
        if actual < 0:
            return v.FieldError(field, "Too many", detail)
        return v.FieldError(field, "Too many", detail, self.shown(actual), has_value=True)

    def _plural(self, count: int, noun: str) -> str:
        return noun if count == 1 and self.minor >= JSON_VALUES_SINCE else noun + "s"
