"""Built-in kinds checked against the official OpenAPI schemas of a Kubernetes release.

The schemas are the ones the `kubernetes-validate` package ships (generated from each release's
`swagger.json`, strict variant: objects list all their fields). One walk over an object does what
the API server's decoder does to the fields it knows the types of:

- unknown fields are dropped (the server's `fieldValidation=Warn`, the default for clients that
  do not ask otherwise; with kubectl's `Strict` they would be refused) and reported as warnings;
- a value of the wrong JSON type is refused with a 400, as the decoder refuses it;
- quantities are parsed and stored in canonical form (`0.5` -> `500m`, `1024Mi` -> `1Gi`);
- `null` fields are dropped (a Go field decoded from `null` is its zero value);
- fields the schema marks required are reported when missing, and enum values are checked.
"""

from __future__ import annotations

import json
from dataclasses import field
from functools import lru_cache
from typing import Any

from reconcile.cluster.memory.validation import fielderrors
from reconcile.objects.quantity import canonical_quantity
from reconcile.records import dataclass
from reconcile.schemas.builtin import REF_PREFIX, KindSchemas, definitions

Schema = dict[str, Any]

_REF_PREFIX = REF_PREFIX
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_QUANTITY_PATTERN = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"


@dataclass
class Outcome:
    """What decoding an object against its schema found."""

    pruned: list[str] = field(default_factory=list)  # unknown fields dropped, as paths
    decode_errors: list[str] = field(default_factory=list)  # a 400: the body cannot be decoded
    errors: list[fielderrors.FieldError] = field(
        default_factory=list
    )  # a 422: invalid field values


class ReleaseSchemas:
    """The schemas of one release, indexed by `(apiVersion, kind)`."""

    def __init__(self, release: str) -> None:
        self.release = release
        self._defs = definitions(release)
        self._kinds = KindSchemas(release)  # the index by (apiVersion, kind)

    def defines(self, api_version: str, kind: str) -> bool:
        return self._kinds.defines(api_version, kind)

    def root(self, api_version: str, kind: str) -> Schema | None:
        """The schema of a kind's objects (None for a kind the release does not define)."""
        name = self._kinds.name(api_version, kind)
        return self._defs[name] if name is not None else None

    def resolve(self, schema: Schema) -> Schema:
        """The schema itself, or the definition its `$ref` names."""
        return _Walk(self._defs, Outcome()).resolve(schema)[0]

    def decode(self, api_version: str, kind: str, obj: dict[str, Any]) -> Outcome:
        """Walk `obj` (changed in place: pruned, quantities canonical, nulls dropped)."""
        outcome = Outcome()
        name = self._kinds.name(api_version, kind)
        if name is not None:
            _Walk(self._defs, outcome).object(self._defs[name], obj, "", name)
        return outcome


@lru_cache(maxsize=4)
def release_schemas(release: str) -> ReleaseSchemas:
    return ReleaseSchemas(release)


class _Walk:
    def __init__(self, defs: dict[str, Schema], outcome: Outcome) -> None:
        self.defs = defs
        self.outcome = outcome

    def resolve(self, schema: Schema) -> tuple[Schema, str | None]:
        ref = schema.get("$ref")
        if isinstance(ref, str) and _REF_PREFIX in ref:
            name = ref.split(_REF_PREFIX, 1)[1]
            return self.defs.get(name, {}), name
        return schema, None

    def value(self, schema: Schema, value: Any, path: str, owner: str) -> Any:
        """The decoded value (quantities canonical); problems go to the outcome."""
        schema, name = self.resolve(schema)
        if name == _QUANTITY:
            return self.quantity(value, path)
        if "oneOf" in schema:  # int-or-string
            if not isinstance(value, str | int) or isinstance(value, bool):
                self.type_error(value, path, owner, "intstr.IntOrString")
            return value
        types = _types(schema)
        found = _json_type(value)
        if types and found not in types and not ("number" in types and found == "integer"):
            self.type_error(value, path, owner, _go_type(schema))
            return value
        if "integer" in types and found == "integer" and not _fits(value, schema.get("format")):
            self.number_error(value, path, owner, _go_type(schema))
            return value
        if "enum" in schema and value not in schema["enum"] and path not in ("apiVersion", "kind"):
            self.outcome.errors.append(
                fielderrors.unsupported(path, value, [str(e) for e in schema["enum"]])
            )
        if isinstance(value, dict):
            if "properties" in schema:
                self.object(schema, value, path, name or owner)
            elif isinstance(schema.get("additionalProperties"), dict):
                item = schema["additionalProperties"]
                for key in list(value):
                    if value[key] is None:
                        continue
                    value[key] = self.value(item, value[key], f"{path}[{key}]", owner)
        elif isinstance(value, list) and isinstance(schema.get("items"), dict):
            for index, item in enumerate(value):
                if item is not None:
                    value[index] = self.value(schema["items"], item, f"{path}[{index}]", owner)
        return value

    def object(self, schema: Schema, obj: dict[str, Any], path: str, owner: str) -> None:
        properties: dict[str, Schema] = schema.get("properties", {})
        closed = schema.get("additionalProperties") is False
        for key in list(obj):
            child_path = f"{path}.{key}" if path else key
            if key not in properties:
                if closed:
                    del obj[key]
                    self.outcome.pruned.append(child_path)
                continue
            if obj[key] is None:
                del obj[key]
                continue
            obj[key] = self.value(properties[key], obj[key], child_path, owner)
        for key in schema.get("required") or ():
            if key not in obj and key not in ("apiVersion", "kind"):
                self.outcome.errors.append(fielderrors.required(f"{path}.{key}" if path else key))

    def quantity(self, value: Any, path: str) -> Any:
        canonical = canonical_quantity(value)
        if canonical is None:
            self.outcome.decode_errors.append(
                f"{path}: quantities must match the regular expression '{_QUANTITY_PATTERN}' "
                f"(got {json.dumps(value)})"
            )
            return value
        return canonical

    def number_error(self, value: Any, path: str, owner: str, go_type: str) -> None:
        struct = owner.rsplit(".", 1)[-1]
        self.outcome.decode_errors.append(
            f"json: cannot unmarshal number {json.dumps(value)} into Go struct field "
            f"{struct}.{path} of type {go_type}"
        )

    def type_error(self, value: Any, path: str, owner: str, go_type: str) -> None:
        struct = owner.rsplit(".", 1)[-1]
        self.outcome.decode_errors.append(
            f"json: cannot unmarshal {_GO_JSON_NAMES[_json_type(value)]} into Go struct field "
            f"{struct}.{path} of type {go_type}"
        )


_GO_JSON_NAMES = {
    "boolean": "bool",
    "integer": "number",
    "number": "number",
    "string": "string",
    "array": "array",
    "object": "object",
    "null": "null",
}


_INTEGER_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def _fits(value: int | float, fmt: object) -> bool:
    """Whether an integer fits the Go type the schema's format names (the decoder's overflow)."""
    low, high = _INTEGER_RANGES.get(str(fmt), _INTEGER_RANGES["int64"])
    return low <= value <= high


def _types(schema: Schema) -> set[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {str(t) for t in declared if t != "null"}
    return set()


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value == int(value) else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _go_type(schema: Schema) -> str:
    types = _types(schema)
    fmt = schema.get("format")
    if "integer" in types:
        return str(fmt or "int")
    if "number" in types:
        return str(fmt or "float64")
    if "boolean" in types:
        return "bool"
    if "string" in types:
        return "string"
    if "array" in types:
        return "[]" + _go_type(schema.get("items") or {})
    return "map[string]interface {}" if "additionalProperties" in schema else "struct"
