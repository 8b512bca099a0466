"""A custom resource checked against its CRD's schema as the API server checks it: kube-openapi's
schema validator (the order of its checks, their messages, which failure of an `anyOf`/`oneOf`
it reports), turned into field errors as apiextensions-apiserver turns them, in the words of
the release the backend plays. The `x-kubernetes-list-type` invariants are in `listtypes`.

What changed across releases, by the commit that changed it:

- 1.20, as the test control plane builds it: `""` is taken for null by the type check
  (`spec.s: Invalid value: "null": spec.s in body must be of type string: "null"`), a quirk of
  kube-openapi's zero-value test under the Go it is built with; gone in 1.23 (e467f52).
- 1.24: kube-openapi names array items `spec.list[0]` (4c65bda, d5a90d6; before, an item's
  errors carried the array's path alone), reports the size of an object with too many or too few
  properties (d2a55e8; before, the limit); apiextensions-apiserver turns `maxLength` into
  `Too long`, `maxItems`/`maxProperties` into `Too many` and type errors into `TypeInvalid`
  (899817b05, 97bfd37e6). How apimachinery words those is in `fielderrors`.
- 1.27: a `multipleOf` of 0 is "must be positive" (kube-openapi a7f241a; before, a division).
- 1.28: `minProperties`/`maxProperties` no longer hide the object's other errors (0227b67).
- 1.36: `integer` and `number` keep their `int32`/`int64`/`float`/`double` format and the
  validator holds values and bounds to their range (kube-openapi 1d94e88:
  `Checked value must be of type integer with format int32 in spec.x`); `schemaformats`.
- 1.37: a quotient or a float for an `integer` counts as whole within a relative 1e-9 of the
  nearest whole number (go-openapi/swag ebc6246, v0.24; Kubernetes moved to v0.27 after 1.36),
  where it had to lie just above its integer part.

`jsonschema` is not used: it agrees on verdicts but not on messages, on `oneOf`'s reported
branch, on `exclusiveMinimum`/`exclusiveMaximum` (booleans in OpenAPI v3.0) or on `nullable`.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from reconcile.cluster.memory.golang import regexp
from reconcile.cluster.memory.golang.printing import GoFloat, go_float, go_json, go_print, go_quote
from reconcile.cluster.memory.openapi.embedded import embedded_resource_errors
from reconcile.cluster.memory.openapi.formats import format_check, kept_format, schema_types
from reconcile.cluster.memory.openapi.listtypes import list_type_errors
from reconcile.cluster.memory.validation import fielderrors
from reconcile.cluster.memory.validation.fielderrors import TYPED_ERRORS_SINCE, FieldWording

__all__ = ["GoFloat", "go_float", "list_type_errors", "schema_errors"]

Schema = dict[str, Any]
_ROOT_FIELDS = ("apiVersion", "kind", "metadata")
# the 1.20 build tested against (Go 1.19) takes "" for a zero value, so for null, in the type
# check: kube-openapi e467f52 ("Remove incorrect zero value check") dropped that check for 1.23
_EMPTY_STRING_NOT_NULL_SINCE = 23
_BRACKETED_INDEX_SINCE = 24
_SIZE_NOT_LIMIT_SINCE = 24
_ZERO_FACTOR_REFUSED_SINCE = 27
_PROPERTIES_COUNT_KEEPS_CHECKING_SINCE = 28
_NUMERIC_RANGES_SINCE = 36
_ROUNDED_INTEGER_TEST_SINCE = 37
_MAX_JSON_INTEGER = 2**53 - 1
_INTEGER_BITS = {"int32": 32, "int64": 64, "": 64}

# kube-openapi's error codes, as apiextensions-apiserver tells them apart
_INVALID = "invalid"
_TYPE = "type"  # InvalidTypeCode: wrong type, or a string not in its format
_REQUIRED = "required"
_ENUM = "enum"
_TOO_LONG = "too long"  # maxLength
_TOO_MANY = "too many"  # maxItems, maxProperties
_UNTYPED = "untyped"  # not an openapi Validation error: composite (anyOf, ...) or range check


@dataclass
class _Problem:
    """One error of kube-openapi's validator: `name` is its path, `message` its text, `value`
    and `limit` its `Value` and `Valid`."""

    name: str
    message: str
    code: str = _INVALID
    value: Any = None
    values: list[Any] = field(default_factory=list)
    limit: int = -1


@dataclass
class _Result:
    errors: list[_Problem] = field(default_factory=list)
    matches: int = 0

    def add(self, *problems: _Problem) -> None:
        for problem in problems:
            if all(problem.message != seen.message for seen in self.errors):
                self.errors.append(problem)

    def merge(self, *others: _Result | None) -> _Result:
        for other in others:
            if other is not None:
                self.add(*other.errors)
                self.matches += other.matches
        return self


def _failed(problem: _Problem) -> _Result:
    return _Result([problem])


def _is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _type_name(value: Any) -> tuple[str, str]:
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


def _invalid_type(name: str, type_name: str, value: Any) -> _Problem:
    text = f"{name} in body must be of type {type_name}"
    if isinstance(value, str):
        text += f": {go_quote(value)}"
    return _Problem(name, text, _TYPE, value)


def _composite(message: str) -> _Problem:
    return _Problem("", message, _UNTYPED)


class _Validator:
    def __init__(self, minor: int) -> None:
        self.minor = minor

    def index(self, path: str, i: int) -> str:
        return f"{path}[{i}]" if self.minor >= _BRACKETED_INDEX_SINCE else path

    def validate(self, schema: Schema, path: str, data: Any) -> _Result:
        result = _Result()
        declared_format = kept_format(schema, self.minor)
        if data is None:
            result.merge(self._type(schema, path, data), self._enum(schema, path, data))
            return result
        checks: list[Callable[[Schema, str, Any], _Result | None]] = [self._props]
        if schema_types(schema) or declared_format:
            checks.insert(0, self._type)
        if isinstance(data, str):
            checks.append(self._string)
            if format_check(declared_format, self.minor) is not None:
                checks.append(self._format)
        if _is_number(data):
            checks.append(self._number)
        if isinstance(data, list):
            checks.append(self._array)
        checks.append(self._enum)
        if isinstance(data, dict):
            checks.append(self._object)
        for check in checks:
            result.merge(check(schema, path, data))
            result.matches += 1
        result.matches += 1
        return result

    def _type(self, schema: Schema, path: str, data: Any) -> _Result:
        types, declared_format = schema_types(schema), kept_format(schema, self.minor)
        if data is None or (data == "" and self.minor < _EMPTY_STRING_NOT_NULL_SINCE):
            if types and "null" not in types and schema.get("nullable") is not True:
                return _failed(_invalid_type(path, ",".join(types), "null"))
            return _Result(matches=1)
        actual, actual_format = _type_name(data)
        float_int = (
            actual == "number"
            and "integer" in types
            and _is_json_integer(float(data), self.minor >= _ROUNDED_INTEGER_TEST_SINCE)
        )
        int_float = actual == "integer" and "number" in types
        scalar = not isinstance(data, str | list)
        if (
            scalar
            and declared_format
            and not (actual in types or actual_format == declared_format or float_int or int_float)
        ):
            return _failed(_invalid_type(path, declared_format, actual_format))
        if declared_format and not scalar and not ({"number", "integer"} & set(types)):
            return _Result(matches=1)
        if not (actual in types or float_int or int_float):
            return _failed(_invalid_type(path, ",".join(types), actual))
        return _Result(matches=1)

    def _props(self, schema: Schema, path: str, data: Any) -> _Result:
        main = _Result()
        any_of = [s for s in schema.get("anyOf") or [] if isinstance(s, dict)]
        if any_of:
            best: _Result | None = None
            first: _Result | None = None
            for sub in any_of:
                outcome = self.validate(sub, path, data)
                if not outcome.errors:
                    best, first = None, first or outcome
                    break
                if best is None or outcome.matches > best.matches:
                    best = outcome
            if first is None:
                main.add(_composite(f"{go_quote(path)} must validate at least one schema (anyOf)"))
            main.merge(best if best is not None else first)
        one_of = [s for s in schema.get("oneOf") or [] if isinstance(s, dict)]
        if one_of:
            best, first, valid = None, None, 0
            for sub in one_of:
                outcome = self.validate(sub, path, data)
                if not outcome.errors:
                    valid += 1
                    best, first = None, first or outcome
                    continue
                if valid == 0 and (best is None or outcome.matches > best.matches):
                    best = outcome
            if valid != 1:
                found = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
                main.add(
                    _composite(
                        f"{go_quote(path)} must validate one and only one schema (oneOf). {found}"
                    )
                )
                main.merge(best)
            else:
                main.merge(first)
        all_of = [s for s in schema.get("allOf") or [] if isinstance(s, dict)]
        if all_of:
            valid = 0
            for sub in all_of:
                outcome = self.validate(sub, path, data)
                valid += not outcome.errors
                main.merge(outcome)
            if valid != len(all_of):
                none = ". None validated" if valid == 0 else ""
                main.add(
                    _composite(f"{go_quote(path)} must validate all the schemas (allOf){none}")
                )
        negated = schema.get("not")
        if isinstance(negated, dict) and not self.validate(negated, path, data).errors:
            main.add(_composite(f"{go_quote(path)} must not validate the schema (not)"))
        main.matches += 1
        return main

    def _string(self, schema: Schema, path: str, data: Any) -> _Result | None:
        max_length, min_length = schema.get("maxLength"), schema.get("minLength")
        # Go counts characters (runes)
        if isinstance(max_length, int) and len(data) > max_length:
            message = f"{path} in body should be at most {max_length} chars long"
            return _failed(_Problem(path, message, _TOO_LONG, data, limit=max_length))
        if isinstance(min_length, int) and len(data) < min_length:
            message = f"{path} in body should be at least {min_length} chars long"
            return _failed(_Problem(path, message, value=data))
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and pattern:
            # Go's regexp (RE2): linear in the text, whatever the pattern
            matched, invalid = regexp.search(pattern, data, self.minor)
            if not matched:
                shown = pattern
                if invalid is not None:
                    shown = f"{pattern}, but pattern is invalid: {invalid}"
                message = f"{path} in body should match '{shown}'"
                return _failed(_Problem(path, message, value=data))
        return None

    def _format(self, schema: Schema, path: str, data: Any) -> _Result | None:
        declared = kept_format(schema, self.minor)
        check = format_check(declared, self.minor)
        if check is not None and not check(data):
            return _failed(_invalid_type(path, declared, data))
        return None

    def _number(self, schema: Schema, path: str, data: Any) -> _Result:
        numbers = _Numbers(self.minor, path, _range_of(schema, self.minor))
        result = _Result()
        result.add(*numbers.out_of_range(data, "Checked"))
        multiple = schema.get("multipleOf")
        if _is_number(multiple):
            factor_out_of_range = numbers.out_of_range(multiple, "MultipleOf")
            result.add(*factor_out_of_range)
            native = isinstance(data, int) and not factor_out_of_range
            result.add(*numbers.multiple_of(data, multiple, native))
        for bound, exclusive_key, below in (
            ("minimum", "exclusiveMinimum", True),
            ("maximum", "exclusiveMaximum", False),
        ):
            limit = schema.get(bound)
            if not _is_number(limit):
                continue
            prefix = "Minimum boundary" if below else "Maximum boundary"
            limit_out_of_range = numbers.out_of_range(limit, prefix)
            result.add(*limit_out_of_range)
            native = isinstance(data, int) and not limit_out_of_range
            exclusive = schema.get(exclusive_key) is True
            result.add(*numbers.beyond(data, limit, exclusive, below, native))
        result.matches += 1
        return result

    def _array(self, schema: Schema, path: str, data: Any) -> _Result:
        result = _Result()
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(data):
                result.merge(self.validate(items, self.index(path, i), item))
        size = len(data)
        min_items, max_items = schema.get("minItems"), schema.get("maxItems")
        if isinstance(min_items, int) and size < min_items:
            message = f"{path} in body should have at least {min_items} items"
            result.add(_Problem(path, message, value=size))
        if isinstance(max_items, int) and size > max_items:
            message = f"{path} in body should have at most {max_items} items"
            result.add(_Problem(path, message, _TOO_MANY, size, limit=max_items))
        if schema.get("uniqueItems") is True and _has_duplicates(data):
            result.add(_Problem(path, f"{path} in body shouldn't contain duplicates"))
        result.matches += 1
        return result

    def _enum(self, schema: Schema, path: str, data: Any) -> _Result | None:
        enum = schema.get("enum")
        if not isinstance(enum, list) or not enum:
            return None
        if data is not None and any(_same(data, allowed) for allowed in enum):
            return None
        listed = " ".join(go_print(e) for e in enum)
        problem = _Problem(
            path, f"{path} in body should be one of [{listed}]", _ENUM, data, list(enum)
        )
        return _failed(problem)

    def _properties_count(self, schema: Schema, path: str, count: int) -> list[_Problem]:
        min_props, max_props = schema.get("minProperties"), schema.get("maxProperties")
        shows_size = self.minor >= _SIZE_NOT_LIMIT_SINCE
        if isinstance(min_props, int) and count < min_props:
            message = f"{path} in body should have at least {min_props} properties"
            return [_Problem(path, message, value=count if shows_size else min_props)]
        if isinstance(max_props, int) and count > max_props:
            message = f"{path} in body should have at most {max_props} properties"
            shown = count if shows_size else max_props
            return [_Problem(path, message, _TOO_MANY, shown, limit=max_props)]
        return []

    def _object(self, schema: Schema, path: str, data: Any) -> _Result:
        result = _Result()
        result.add(*self._properties_count(schema, path, len(data)))
        if result.errors and self.minor < _PROPERTIES_COUNT_KEEPS_CHECKING_SINCE:
            return result
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        additional = schema.get("additionalProperties")
        root = path == ""
        if additional is False:
            for key in data:
                if key not in properties:
                    message = f"{path}.{key} in body is a forbidden property"
                    result.add(_Problem(path, message, value=key))
        elif isinstance(additional, dict):
            for key, value in data.items():
                if key not in properties and not (root and key in _ROOT_FIELDS):
                    result.merge(self.validate(additional, f"{path}.{key}", value))
        for key, sub in properties.items():
            if key in data and isinstance(sub, dict) and not (root and key in _ROOT_FIELDS):
                result.merge(self.validate(sub, f"{path}.{key}" if path else key, data[key]))
        for key in schema.get("required") or []:
            if key not in data and not (root and key in _ROOT_FIELDS):
                result.add(
                    _Problem(f"{path}.{key}", f"{path}.{key} in body is required", _REQUIRED)
                )
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

    def out_of_range(self, value: float, prefix: str) -> list[_Problem]:
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
            _Problem(
                "", f"{prefix} value must be of type {type_name} {kind} in {self.path}", _UNTYPED
            )
        ]

    def multiple_of(self, data: float, factor: float, native: bool) -> list[_Problem]:
        refuses_zero = self.minor >= _ZERO_FACTOR_REFUSED_SINCE
        if native:
            whole = int(factor)
            if whole < 0 or (whole == 0 and refuses_zero):
                return [self._not_positive(whole)]
            if whole == 0 or int(data) % whole == 0:  # Go would divide by zero: not a real schema
                return []
            message = f"{self.path} in body should be a multiple of {whole}"
            return [_Problem(self.path, message, value=data)]
        if factor < 0 or (factor == 0 and refuses_zero):
            return [self._not_positive(GoFloat(factor))]
        if factor != 0:
            quotient = (1 / factor * data) if factor < 1 else (data / factor)
            if _is_json_integer(quotient, self.minor >= _ROUNDED_INTEGER_TEST_SINCE):
                return []
        message = f"{self.path} in body should be a multiple of {go_float(factor)}"
        return [_Problem(self.path, message, value=GoFloat(data))]

    def _not_positive(self, factor: float) -> _Problem:
        shown = go_float(factor) if isinstance(factor, float) else str(factor)
        message = f"factor MultipleOf declared for {self.path} must be positive: {shown}"
        return _Problem(self.path, message, value=factor)

    def beyond(
        self, data: float, limit: float, exclusive: bool, below: bool, native: bool
    ) -> list[_Problem]:
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
        return [_Problem(self.path, f"{self.path} in body should be {words} {shown}", value=value)]


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


def _is_json_integer(value: float, relative_to_rounded: bool) -> bool:
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


def _same(data: Any, allowed: Any) -> bool:
    if isinstance(data, bool) != isinstance(allowed, bool):
        return False
    if isinstance(data, int | float) and isinstance(allowed, int | float):
        return bool(data == allowed)
    return bool(type(data) is type(allowed) and data == allowed)


def _has_duplicates(items: list[Any]) -> bool:
    """reflect.DeepEqual between items: `1` and `1.0` differ (int64 and float64)."""
    seen = [json.dumps(item, sort_keys=True) for item in items]
    return len(set(seen)) != len(seen)


def _field_errors(result: _Result, minor: int) -> list[fielderrors.FieldError]:
    """apiextensions-apiserver's translation of kube-openapi's errors into field errors
    (`kubeOpenAPIResultToFieldErrors`)."""
    words = FieldWording(minor)
    typed = minor >= TYPED_ERRORS_SINCE
    errors: list[fielderrors.FieldError] = []
    for problem in result.errors:
        name = (problem.name[1:] if problem.name.startswith(".") else problem.name) or "<nil>"
        value = "" if problem.value is None else problem.value
        if problem.code == _UNTYPED:
            errors.append(words.invalid("<nil>", "", problem.message))
        elif problem.code == _REQUIRED:
            errors.append(words.required(name))
        elif problem.code == _ENUM:
            supported = [e if isinstance(e, str) else go_json(e) for e in problem.values]
            errors.append(words.not_supported(name, problem.value, supported))
        elif typed and problem.code == _TOO_LONG:
            errors.append(words.too_long(name, problem.limit))
        elif typed and problem.code == _TOO_MANY:
            errors.append(words.too_many(name, problem.value, problem.limit))
        elif typed and problem.code == _TYPE:
            errors.append(words.type_invalid(name, value, problem.message))
        else:
            errors.append(words.invalid(name, value, problem.message))
    return errors


def schema_errors(schema: Schema, obj: dict[str, Any], minor: int) -> list[fielderrors.FieldError]:
    """What `obj` breaks of its CRD's `schema`, as the API server of release 1.`minor` says it:
    the schema's errors, then those of its embedded resources (`x-kubernetes-embedded-resource`),
    in the order the server lists them."""
    errors = _field_errors(_Validator(minor).validate(schema, "", obj), minor)
    return errors + embedded_resource_errors(schema, obj, minor)
