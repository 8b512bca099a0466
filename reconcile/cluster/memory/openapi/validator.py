"""A custom resource checked against its CRD's schema as the API server checks it: kube-openapi's
schema validator (the order of its checks, their messages, which failure of an `anyOf`/`oneOf`
it reports), turned into field errors as apiextensions-apiserver turns them, in the words of
the release the backend plays (`problems`; numbers are checked in `numbers`). The
`x-kubernetes-list-type` invariants are in `listtypes`.

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
  `Checked value must be of type integer with format int32 in spec.x`); `formats`, `numbers`.
- 1.37: a quotient or a float for an `integer` counts as whole within a relative 1e-9 of the
  nearest whole number (go-openapi/swag ebc6246, v0.24; Kubernetes moved to v0.27 after 1.36),
  where it had to lie just above its integer part.

`jsonschema` is not used: it agrees on verdicts but not on messages, on `oneOf`'s reported
branch, on `exclusiveMinimum`/`exclusiveMaximum` (booleans in OpenAPI v3.0) or on `nullable`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from reconcile.cluster.memory.golang import regexp
from reconcile.cluster.memory.golang.printing import go_print, go_quote
from reconcile.cluster.memory.openapi.embedded import embedded_resource_errors
from reconcile.cluster.memory.openapi.formats import format_check, kept_format, schema_types
from reconcile.cluster.memory.openapi.numbers import (
    ROUNDED_INTEGER_TEST_SINCE,
    is_json_integer,
    number_errors,
)
from reconcile.cluster.memory.openapi.problems import (
    ENUM,
    REQUIRED,
    TOO_LONG,
    TOO_MANY,
    Problem,
    Result,
    composite,
    failed,
    field_errors,
    invalid_type,
    is_number,
    type_name,
)
from reconcile.cluster.memory.validation import fielderrors

Schema = dict[str, Any]
_ROOT_FIELDS = ("apiVersion", "kind", "metadata")
# the 1.20 build tested against (Go 1.19) takes "" for a zero value, so for null, in the type
# check: kube-openapi e467f52 ("Remove incorrect zero value check") dropped that check for 1.23
_EMPTY_STRING_NOT_NULL_SINCE = 23
_BRACKETED_INDEX_SINCE = 24
_SIZE_NOT_LIMIT_SINCE = 24
_PROPERTIES_COUNT_KEEPS_CHECKING_SINCE = 28


class _Validator:
    def __init__(self, minor: int) -> None:
        self.minor = minor

    def index(self, path: str, i: int) -> str:
        return f"{path}[{i}]" if self.minor >= _BRACKETED_INDEX_SINCE else path

    def validate(self, schema: Schema, path: str, data: Any) -> Result:
        result = Result()
        declared_format = kept_format(schema, self.minor)
        if data is None:
            result.merge(self._type(schema, path, data), self._enum(schema, path, data))
            return result
        checks: list[Callable[[Schema, str, Any], Result | None]] = [self._props]
        if schema_types(schema) or declared_format:
            checks.insert(0, self._type)
        if isinstance(data, str):
            checks.append(self._string)
            if format_check(declared_format, self.minor) is not None:
                checks.append(self._format)
        if is_number(data):
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

    def _type(self, schema: Schema, path: str, data: Any) -> Result:
        types, declared_format = schema_types(schema), kept_format(schema, self.minor)
        if data is None or (data == "" and self.minor < _EMPTY_STRING_NOT_NULL_SINCE):
            if types and "null" not in types and schema.get("nullable") is not True:
                return failed(invalid_type(path, ",".join(types), "null"))
            return Result(matches=1)
        actual, actual_format = type_name(data)
        float_int = (
            actual == "number"
            and "integer" in types
            and is_json_integer(float(data), self.minor >= ROUNDED_INTEGER_TEST_SINCE)
        )
        int_float = actual == "integer" and "number" in types
        scalar = not isinstance(data, str | list)
        if (
            scalar
            and declared_format
            and not (actual in types or actual_format == declared_format or float_int or int_float)
        ):
            return failed(invalid_type(path, declared_format, actual_format))
        if declared_format and not scalar and not ({"number", "integer"} & set(types)):
            return Result(matches=1)
        if not (actual in types or float_int or int_float):
            return failed(invalid_type(path, ",".join(types), actual))
        return Result(matches=1)

    def _props(self, schema: Schema, path: str, data: Any) -> Result:
        main = Result()
        any_of = [s for s in schema.get("anyOf") or [] if isinstance(s, dict)]
        if any_of:
            best: Result | None = None
            first: Result | None = None
            for sub in any_of:
                outcome = self.validate(sub, path, data)
                if not outcome.errors:
                    best, first = None, first or outcome
                    break
                if best is None or outcome.matches > best.matches:
                    best = outcome
            if first is None:
                main.add(composite(f"{go_quote(path)} must validate at least one schema (anyOf)"))
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
                    composite(
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
                main.add(composite(f"{go_quote(path)} must validate all the schemas (allOf){none}"))
        negated = schema.get("not")
        if isinstance(negated, dict) and not self.validate(negated, path, data).errors:
            main.add(composite(f"{go_quote(path)} must not validate the schema (not)"))
        main.matches += 1
        return main

    def _string(self, schema: Schema, path: str, data: Any) -> Result | None:
        max_length, min_length = schema.get("maxLength"), schema.get("minLength")
        # Go counts characters (runes)
        if isinstance(max_length, int) and len(data) > max_length:
            message = f"{path} in body should be at most {max_length} chars long"
            return failed(Problem(path, message, TOO_LONG, data, limit=max_length))
        if isinstance(min_length, int) and len(data) < min_length:
            message = f"{path} in body should be at least {min_length} chars long"
            return failed(Problem(path, message, value=data))
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and pattern:
            # Go's regexp (RE2): linear in the text, whatever the pattern
            matched, invalid = regexp.search(pattern, data, self.minor)
            if not matched:
                shown = pattern
                if invalid is not None:
                    shown = f"{pattern}, but pattern is invalid: {invalid}"
                message = f"{path} in body should match '{shown}'"
                return failed(Problem(path, message, value=data))
        return None

    def _format(self, schema: Schema, path: str, data: Any) -> Result | None:
        declared = kept_format(schema, self.minor)
        check = format_check(declared, self.minor)
        if check is not None and not check(data):
            return failed(invalid_type(path, declared, data))
        return None

    def _number(self, schema: Schema, path: str, data: Any) -> Result:
        return number_errors(schema, path, data, self.minor)

    def _array(self, schema: Schema, path: str, data: Any) -> Result:
        result = Result()
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(data):
                result.merge(self.validate(items, self.index(path, i), item))
        size = len(data)
        min_items, max_items = schema.get("minItems"), schema.get("maxItems")
        if isinstance(min_items, int) and size < min_items:
            message = f"{path} in body should have at least {min_items} items"
            result.add(Problem(path, message, value=size))
        if isinstance(max_items, int) and size > max_items:
            message = f"{path} in body should have at most {max_items} items"
            result.add(Problem(path, message, TOO_MANY, size, limit=max_items))
        if schema.get("uniqueItems") is True and _has_duplicates(data):
            result.add(Problem(path, f"{path} in body shouldn't contain duplicates"))
        result.matches += 1
        return result

    def _enum(self, schema: Schema, path: str, data: Any) -> Result | None:
        enum = schema.get("enum")
        if not isinstance(enum, list) or not enum:
            return None
        if data is not None and any(_same(data, allowed) for allowed in enum):
            return None
        listed = " ".join(go_print(e) for e in enum)
        problem = Problem(
            path, f"{path} in body should be one of [{listed}]", ENUM, data, list(enum)
        )
        return failed(problem)

    def _properties_count(self, schema: Schema, path: str, count: int) -> list[Problem]:
        min_props, max_props = schema.get("minProperties"), schema.get("maxProperties")
        shows_size = self.minor >= _SIZE_NOT_LIMIT_SINCE
        if isinstance(min_props, int) and count < min_props:
            message = f"{path} in body should have at least {min_props} properties"
            return [Problem(path, message, value=count if shows_size else min_props)]
        if isinstance(max_props, int) and count > max_props:
            message = f"{path} in body should have at most {max_props} properties"
            shown = count if shows_size else max_props
            return [Problem(path, message, TOO_MANY, shown, limit=max_props)]
        return []

    def _object(self, schema: Schema, path: str, data: Any) -> Result:
        result = Result()
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
                    result.add(Problem(path, message, value=key))
        elif isinstance(additional, dict):
            for key, value in data.items():
                if key not in properties and not (root and key in _ROOT_FIELDS):
                    result.merge(self.validate(additional, f"{path}.{key}", value))
        for key, sub in properties.items():
            if key in data and isinstance(sub, dict) and not (root and key in _ROOT_FIELDS):
                result.merge(self.validate(sub, f"{path}.{key}" if path else key, data[key]))
        for key in schema.get("required") or []:
            if key not in data and not (root and key in _ROOT_FIELDS):
                result.add(Problem(f"{path}.{key}", f"{path}.{key} in body is required", REQUIRED))
        return result


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


def schema_errors(schema: Schema, obj: dict[str, Any], minor: int) -> list[fielderrors.FieldError]:
    """What `obj` breaks of its CRD's `schema`, as the API server of release 1.`minor` says it:
    the schema's errors, then those of its embedded resources (`x-kubernetes-embedded-resource`),
    in the order the server lists them."""
    errors = field_errors(_Validator(minor).validate(schema, "", obj), minor)
    return errors + embedded_resource_errors(schema, obj, minor)
