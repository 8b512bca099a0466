"""kube-openapi's checks of a number (validate/type.go, values.go): from 1.36 the range of the
type and format the server kept for it (`int32`, `int64`, `float`), `multipleOf` (a factor of 0
refused from 1.27), and `minimum`/`maximum`, exclusive or not; an integer is compared as an
integer. And swag's test of a float for a whole number, which the type check shares (from 1.37,
within a relative 1e-9 of the nearest whole number; before, just above its integer part)."""

from __future__ import annotations

import math
import struct
from typing import Any

from reconcile.cluster.memory.golang.printing import GoFloat, go_float
from reconcile.cluster.memory.openapi.formats import kept_format, schema_types
from reconcile.cluster.memory.openapi.problems import UNTYPED, Problem, Result, is_number
from reconcile.records import dataclass

Schema = dict[str, Any]
_ZERO_FACTOR_REFUSED_SINCE = 27
_NUMERIC_RANGES_SINCE = 36
ROUNDED_INTEGER_TEST_SINCE = 37
_MAX_JSON_INTEGER = 2**53 - 1
_INTEGER_BITS = {"int32": 32, "int64": 64, "": 64}


def number_errors(schema: Schema, path: str, data: float, minor: int) -> Result:
    """A number's checks: its range (from 1.36), `multipleOf`, `minimum` and `maximum`."""
    numbers = _Numbers(minor, path, _range_of(schema, minor))
    result = Result()
    result.add(*numbers.out_of_range(data, "Checked"))
    multiple = schema.get("multipleOf")
    if is_number(multiple):
        factor_out_of_range = numbers.out_of_range(multiple, "MultipleOf")
        result.add(*factor_out_of_range)
        native = isinstance(data, int) and not factor_out_of_range
        result.add(*numbers.multiple_of(data, multiple, native))
    for bound, exclusive_key, below in (
        ("minimum", "exclusiveMinimum", True),
        ("maximum", "exclusiveMaximum", False),
    ):
        limit = schema.get(bound)
        if not is_number(limit):
            continue
        prefix = "Minimum boundary" if below else "Maximum boundary"
        limit_out_of_range = numbers.out_of_range(limit, prefix)
        result.add(*limit_out_of_range)
        native = isinstance(data, int) and not limit_out_of_range
        exclusive = schema.get(exclusive_key) is True
        result.add(*numbers.beyond(data, limit, exclusive, below, native))
    result.matches += 1
    return result


def _range_of(schema: Schema, minor: int) -> tuple[str, str]:
    """The type and format kube-openapi holds numbers to (from 1.36): a schema of one numeric
    type, with the format the server kept for it."""
    types = schema_types(schema)
    if minor < _NUMERIC_RANGES_SINCE or len(types) != 1 or types[0] not in ("integer", "number"):
        return "", ""
    return types[0], kept_format(schema, minor)


@dataclass(frozen=True)
class _Numbers:
    """kube-openapi's number validator at one path: ranges, `multipleOf`, bounds."""

    minor: int
    path: str
    held_to: tuple[str, str]  # the (type, format) values must fit; ("", "") for none

    def out_of_range(self, value: float, prefix: str) -> list[Problem]:
        """IsValueValidAgainstRange: `value` (the datum or a keyword's) fits the type/format."""
        type_name, number_format = self.held_to
        if type_name == "integer":
            fits = _fits_integer(value, _INTEGER_BITS.get(number_format, 64))
        elif type_name == "number" and number_format == "float":
            fits = _fits_float32(value)
        else:
            return []
        if fits:
            return []
        kind = f"with format {number_format}" if number_format else "(default format)"
        return [
            Problem(
                "", f"{prefix} value must be of type {type_name} {kind} in {self.path}", UNTYPED
            )
        ]

    def multiple_of(self, data: float, factor: float, native: bool) -> list[Problem]:
        refuses_zero = self.minor >= _ZERO_FACTOR_REFUSED_SINCE
        if native:
            whole = int(factor)
            if whole < 0 or (whole == 0 and refuses_zero):
                return [self._not_positive(whole)]
            if whole == 0 or int(data) % whole == 0:  # Go would divide by zero: not a real schema
                return []
            message = f"{self.path} in body should be a multiple of {whole}"
            return [Problem(self.path, message, value=data)]
        if factor < 0 or (factor == 0 and refuses_zero):
            return [self._not_positive(GoFloat(factor))]
        if factor != 0:
            quotient = (1 / factor * data) if factor < 1 else (data / factor)
            if is_json_integer(quotient, self.minor >= ROUNDED_INTEGER_TEST_SINCE):
                return []
        message = f"{self.path} in body should be a multiple of {go_float(factor)}"
        return [Problem(self.path, message, value=GoFloat(data))]

    def _not_positive(self, factor: float) -> Problem:
        shown = go_float(factor) if isinstance(factor, float) else str(factor)
        message = f"factor MultipleOf declared for {self.path} must be positive: {shown}"
        return Problem(self.path, message, value=factor)

    def beyond(
        self, data: float, limit: float, exclusive: bool, below: bool, native: bool
    ) -> list[Problem]:
        """`minimum`/`maximum`: an integer is compared with the bound truncated to an integer."""
        compared: float = int(limit) if native else float(limit)
        if below:
            broken = data <= compared if exclusive else data < compared
            words = "greater than" if exclusive else "greater than or equal to"
        else:
            broken = data >= compared if exclusive else data > compared
            words = "less than" if exclusive else "less than or equal to"
        if not broken:
            return []
        shown: Any = int(limit) if native else GoFloat(limit)
        value = data if native else GoFloat(data)
        return [Problem(self.path, f"{self.path} in body should be {words} {shown}", value=value)]


def _fits_integer(value: float, bits: int) -> bool:
    """strconv.ParseInt of the value's decimal form (a float must be whole)."""
    if isinstance(value, float) and not value.is_integer():
        return False  # its decimal form has a fraction
    bound: int = 2 ** (bits - 1)
    return -bound <= int(value) < bound


def _fits_float32(value: float) -> bool:
    try:
        struct.pack("<f", float(value))
    except OverflowError:
        return False
    return True


def is_json_integer(value: float, relative_to_rounded: bool) -> bool:
    """swag.IsFloat64AJSONInteger: whole, or close enough to be taken for whole."""
    if math.isnan(value) or math.isinf(value) or abs(value) > _MAX_JSON_INTEGER:
        return False
    if value.is_integer():
        return True
    if relative_to_rounded:
        rounded = math.copysign(math.floor(abs(value) + 0.5), value)
        return rounded != 0 and abs(value - rounded) < 1e-9 * abs(rounded)
    # compared with its integer part (Go's uint64 conversion): just above a whole number only
    whole = float(math.trunc(value))
    if value < 0 or whole == 0:
        return False
    return (value - whole) / (value + whole) < 1e-9
