"""A custom resource checked against its CRD's schema as the API server checks it: kube-openapi's
schema validator (the order of its checks, their messages, which failure of an `anyOf`/`oneOf`
it reports), then the `x-kubernetes-list-type` invariants, turned into field errors as
apiextensions-apiserver turns them.

`jsonschema` is not used: it agrees on verdicts but not on messages, on `oneOf`'s reported
branch, on `exclusiveMinimum`/`exclusiveMaximum` (booleans in OpenAPI v3.0) or on `nullable`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from reconcile.cluster.memory import validation as v
from reconcile.cluster.memory.schemaformats import check_of

Schema = dict[str, Any]
_ROOT_FIELDS = ("apiVersion", "kind", "metadata")
# Until Kubernetes 1.24 kube-openapi named an array item's errors by the array's path alone
# (`spec.list`, `spec.list.key`: checked against the 1.20 API server); since, `spec.list[0]`
_BRACKETED_INDEX_SINCE = 24


class GoFloat(float):
    """A float printed as Go's `%v` prints a float64 (`5`, `0.5`, `1e+06`)."""

    def __str__(self) -> str:
        return go_float(self)


def go_float(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "0"
    # the shortest digits that read back as `value`, and where the decimal point falls
    _, digit_tuple, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    point = len(digits) + int(exponent)
    shown_exponent = point - 1
    if shown_exponent < -4 or shown_exponent >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        text = f"{mantissa}e{'-' if shown_exponent < 0 else '+'}{abs(shown_exponent):02d}"
    elif point <= 0:
        text = "0." + "0" * (-point) + digits
    elif point >= len(digits):
        text = digits + "0" * (point - len(digits))
    else:
        text = digits[:point] + "." + digits[point:]
    return ("-" if value < 0 else "") + text


@dataclass
class _Problem:
    """One error of kube-openapi's validator: `name` is its path, `message` its text."""

    name: str
    message: str
    code: str = "invalid"  # "required", "enum", "invalid", "composite"
    value: Any = None
    values: list[Any] = field(default_factory=list)


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


def _type_name(value: Any) -> tuple[str, str]:
    """The type and format kube-openapi sees in a decoded JSON value."""
    if isinstance(value, bool):
        return "boolean", ""
    if isinstance(value, int):
        return "integer", "int64"
    if isinstance(value, float):
        return "number", "double"
    if isinstance(value, str):
        return "string", ""
    if isinstance(value, list):
        return "array", ""
    return "object", ""


def _types(schema: Schema) -> list[str]:
    if schema.get("x-kubernetes-int-or-string") is True:
        return ["integer", "string"]
    wanted = schema.get("type")
    return [wanted] if isinstance(wanted, str) and wanted else []


def _format(schema: Schema) -> str:
    declared = schema.get("format")
    return declared if isinstance(declared, str) and check_of(declared) is not None else ""


def _invalid_type(name: str, type_name: str, value: Any) -> _Problem:
    text = f"{name} in body must be of type {type_name}"
    if isinstance(value, str):
        text += f": {json.dumps(value)}"
    return _Problem(name, text, value=value)


class _Validator:
    def __init__(self, minor: int) -> None:
        self.minor = minor

    def index(self, path: str, i: int) -> str:
        return f"{path}[{i}]" if self.minor >= _BRACKETED_INDEX_SINCE else path

    def validate(self, schema: Schema, path: str, data: Any) -> _Result:
        result = _Result()
        if data is None:
            result.merge(self._type(schema, path, data), self._enum(schema, path, data))
            return result
        checks: list[Callable[[Schema, str, Any], _Result | None]] = [self._props]
        if _types(schema) or _format(schema):
            checks.insert(0, self._type)
        if isinstance(data, str):
            checks.append(self._string)
            if _format(schema):
                checks.append(self._format)
        if isinstance(data, int | float) and not isinstance(data, bool):
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
        types, declared_format = _types(schema), _format(schema)
        if data is None:
            if types and "null" not in types and schema.get("nullable") is not True:
                return _failed(_invalid_type(path, ",".join(types), "null"))
            return _Result(matches=1)
        actual, actual_format = _type_name(data)
        float_int = actual == "number" and "integer" in types and float(data).is_integer()
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
                main.add(
                    _composite(f"{json.dumps(path)} must validate at least one schema (anyOf)")
                )
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
                        f"{json.dumps(path)} must validate one and only one schema (oneOf). {found}"
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
                    _composite(f"{json.dumps(path)} must validate all the schemas (allOf){none}")
                )
        negated = schema.get("not")
        if isinstance(negated, dict) and not self.validate(negated, path, data).errors:
            main.add(_composite(f"{json.dumps(path)} must not validate the schema (not)"))
        main.matches += 1
        return main

    def _string(self, schema: Schema, path: str, data: Any) -> _Result | None:
        max_length, min_length = schema.get("maxLength"), schema.get("minLength")
        # Go counts characters (runes)
        if isinstance(max_length, int) and len(data) > max_length:
            return _failed(
                _Problem(
                    path, f"{path} in body should be at most {max_length} chars long", value=data
                )
            )
        if isinstance(min_length, int) and len(data) < min_length:
            return _failed(
                _Problem(
                    path, f"{path} in body should be at least {min_length} chars long", value=data
                )
            )
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and pattern:
            try:
                matched = re.search(pattern, data) is not None
            except re.error:
                matched = True  # a pattern Python cannot read is not held against the object
            if not matched:
                return _failed(
                    _Problem(path, f"{path} in body should match '{pattern}'", value=data)
                )
        return None

    def _format(self, schema: Schema, path: str, data: Any) -> _Result | None:
        declared = str(schema["format"])
        check = check_of(declared)
        if check is not None and not check(data):
            return _failed(_invalid_type(path, declared, data))
        return None

    def _number(self, schema: Schema, path: str, data: Any) -> _Result:
        result = _Result()
        native_int = isinstance(data, int)
        multiple = schema.get("multipleOf")
        if isinstance(multiple, int | float) and not isinstance(multiple, bool):
            result.add(*_multiple_of(path, data, multiple, native_int))
        for bound, exclusive_key, below in (
            ("minimum", "exclusiveMinimum", True),
            ("maximum", "exclusiveMaximum", False),
        ):
            limit = schema.get(bound)
            if not isinstance(limit, int | float) or isinstance(limit, bool):
                continue
            exclusive = schema.get(exclusive_key) is True
            # the server compares an integer with the bound truncated to an integer
            shown: Any = int(limit) if native_int else GoFloat(limit)
            compared = int(limit) if native_int else float(limit)
            if below:
                broken = data <= compared if exclusive else data < compared
                words = "greater than" if exclusive else "greater than or equal to"
            else:
                broken = data >= compared if exclusive else data > compared
                words = "less than" if exclusive else "less than or equal to"
            if broken:
                value = data if native_int else GoFloat(data)
                result.add(_Problem(path, f"{path} in body should be {words} {shown}", value=value))
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
            result.add(
                _Problem(path, f"{path} in body should have at least {min_items} items", value=size)
            )
        if isinstance(max_items, int) and size > max_items:
            result.add(
                _Problem(path, f"{path} in body should have at most {max_items} items", value=size)
            )
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
        listed = " ".join(_go_print(e) for e in enum)
        problem = _Problem(
            path, f"{path} in body should be one of [{listed}]", "enum", data, list(enum)
        )
        return _failed(problem)

    def _object(self, schema: Schema, path: str, data: Any) -> _Result:
        count = len(data)
        min_props, max_props = schema.get("minProperties"), schema.get("maxProperties")
        if isinstance(min_props, int) and count < min_props:
            return _failed(
                _Problem(
                    path,
                    f"{path} in body should have at least {min_props} properties",
                    value=min_props,
                )
            )
        if isinstance(max_props, int) and count > max_props:
            return _failed(
                _Problem(
                    path,
                    f"{path} in body should have at most {max_props} properties",
                    value=max_props,
                )
            )
        result = _Result()
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
                    _Problem(f"{path}.{key}", f"{path}.{key} in body is required", "required")
                )
        return result


def _composite(message: str) -> _Problem:
    return _Problem("", message, "composite")


def _same(data: Any, allowed: Any) -> bool:
    if isinstance(data, bool) != isinstance(allowed, bool):
        return False
    if isinstance(data, int | float) and isinstance(allowed, int | float):
        return bool(data == allowed)
    return bool(type(data) is type(allowed) and data == allowed)


def _has_duplicates(items: list[Any]) -> bool:
    seen = [json.dumps(item, sort_keys=True) for item in items]
    return len(set(seen)) != len(seen)


def _go_print(value: Any) -> str:
    """Go's `%v` of a decoded JSON value (enum lists in messages)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    if value is None:
        return "<nil>"
    if isinstance(value, list):
        return "[" + " ".join(_go_print(item) for item in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_print(value[k])}" for k in sorted(value)) + "]"
    return str(value)


def _multiple_of(path: str, data: float, factor: float, native_int: bool) -> list[_Problem]:
    if factor < 0:
        message = f"factor MultipleOf declared for {path} must be positive: {_go_print(factor)}"
        return [_Problem(path, message, value=factor)]
    if native_int:
        whole = int(factor)
        if whole == 0 or int(data) % whole == 0:  # Go would divide by zero: not a real schema
            return []
        return [_Problem(path, f"{path} in body should be a multiple of {whole}", value=data)]
    quotient = (1 / factor * data) if factor < 1 else (data / factor)
    if float(quotient).is_integer():
        return []
    message = f"{path} in body should be a multiple of {go_float(factor)}"
    return [_Problem(path, message, value=GoFloat(data))]


def _field_errors(result: _Result) -> list[v.FieldError]:
    """apiextensions-apiserver's translation of kube-openapi's errors into field errors."""
    errors: list[v.FieldError] = []
    for problem in result.errors:
        name = problem.name[1:] if problem.name.startswith(".") else problem.name
        if problem.code == "composite":
            errors.append(v.invalid_value("<nil>", "", problem.message))
        elif problem.code == "required":
            errors.append(v.required(name))
        elif problem.code == "enum":
            supported = [e if isinstance(e, str) else json.dumps(e) for e in problem.values]
            errors.append(v.unsupported(name, problem.value, supported))
        else:
            value = "" if problem.value is None else problem.value
            errors.append(v.invalid_value(name or "<nil>", value, problem.message))
    return errors


def schema_errors(schema: Schema, obj: dict[str, Any], minor: int) -> list[v.FieldError]:
    """What `obj` breaks of its CRD's `schema`, as the API server of release 1.`minor` says it."""
    return _field_errors(_Validator(minor).validate(schema, "", obj))


# --- x-kubernetes-list-type -------------------------------------------------------------------


def list_type_errors(schema: Schema, value: Any, path: str = "") -> list[v.FieldError]:
    """Duplicates in `set` and `map` lists (by their `x-kubernetes-list-map-keys`)."""
    errors: list[v.FieldError] = []
    if isinstance(value, dict):
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        additional = schema.get("additionalProperties")
        for key, item in value.items():
            sub = properties.get(key, additional)
            if isinstance(sub, dict):
                errors += list_type_errors(sub, item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        list_type = schema.get("x-kubernetes-list-type")
        if list_type == "set":
            errors += [v.duplicate(f"{path}[{i}]", value[i]) for i in _repeated(value)]
        elif list_type == "map":
            errors += _map_list_errors(schema, value, path)
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                errors += list_type_errors(items, item, f"{path}[{i}]")
    return errors


def _repeated(items: list[Any]) -> list[int]:
    """The index of each value's second occurrence."""
    counts: dict[str, int] = {}
    found = []
    for i, item in enumerate(items):
        key = json.dumps(item, sort_keys=True) + type(item).__name__
        counts[key] = counts.get(key, 0) + 1
        if counts[key] == 2:
            found.append(i)
    return found


def _map_list_errors(schema: Schema, items: list[Any], path: str) -> list[v.FieldError]:
    for i, item in enumerate(items):
        if item is not None and not isinstance(item, dict):
            return [
                v.invalid_value(
                    f"{path}[{i}]", item, "must be an object for an array of list-type map"
                )
            ]
    if len(items) <= 1:
        return []
    key_fields = [k for k in schema.get("x-kubernetes-list-map-keys") or [] if isinstance(k, str)]
    keys = [{k: item[k] for k in key_fields if k in item} if item else {} for item in items]
    return [v.duplicate(f"{path}[{i}]", _go_map(keys[i])) for i in _repeated(keys)]


def _go_map(value: dict[str, Any]) -> v.GoLiteral:
    """Go's `%#v` of a `map[string]interface{}`."""
    pairs = ",".join(f"{json.dumps(k)}:{_go_sharp(value[k])}" for k in sorted(value))
    return v.GoLiteral("map[string]interface {}{" + pairs + "}")


def _go_sharp(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    return v.GoLiteral(json.dumps(value))
