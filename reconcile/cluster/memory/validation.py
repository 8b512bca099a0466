"""Field validation with the API server's messages: names, labels, finalizers, owner references.

Errors are collected as `FieldError`s and raised together as one `Invalid`, formatted like
apimachinery's `NewInvalid`: `ConfigMap "x" is invalid: metadata.name: Invalid value: ...`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from reconcile.cluster.errors import BadRequest, Invalid
from reconcile.cluster.memory import builtin
from reconcile.cluster.types import Obj, ResourceInfo
from reconcile.objects.names import ANNOTATIONS_LIMIT, annotations_size

_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*"
_DNS1035_LABEL = r"[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_NAME_PART = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"

_DNS1123_LABEL_RE = re.compile(rf"^{_DNS1123_LABEL}$")
_DNS1123_SUBDOMAIN_RE = re.compile(rf"^{_DNS1123_SUBDOMAIN}$")
_DNS1035_LABEL_RE = re.compile(rf"^{_DNS1035_LABEL}$")
_QUALIFIED_NAME_PART_RE = re.compile(rf"^{_QUALIFIED_NAME_PART}$")
_LABEL_VALUE_RE = re.compile(rf"^{_LABEL_VALUE}$")

_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    f"regex used for validation is '{_DNS1123_LABEL}')"
)
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    f"for validation is '{_DNS1123_SUBDOMAIN}')"
)
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    f"'abc-123', regex used for validation is '{_DNS1035_LABEL}')"
)
_QUALIFIED_NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
    f"for validation is '{_QUALIFIED_NAME_PART}')"
)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    f"'my_value',  or '12345', regex used for validation is '{_LABEL_VALUE}')"
)


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


# --- names -------------------------------------------------------------------------------------


def dns1123_subdomain_errors(value: str) -> list[str]:
    errs = []
    if len(value) > 253:
        errs.append("must be no more than 253 characters")
    if not _DNS1123_SUBDOMAIN_RE.match(value):
        errs.append(_DNS1123_SUBDOMAIN_MSG)
    return errs


def dns1123_label_errors(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _DNS1123_LABEL_RE.match(value):
        errs.append(_DNS1123_LABEL_MSG)
    return errs


def dns1035_label_errors(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _DNS1035_LABEL_RE.match(value):
        errs.append(_DNS1035_LABEL_MSG)
    return errs


def path_segment_errors(value: str) -> list[str]:
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def name_errors(resource: ResourceInfo, name: str) -> list[FieldError]:
    """The errors `metadata.name` gets under the resource's name rule."""
    gr = resource.group_resource
    if gr in builtin.DNS1123_LABEL_NAMES:
        problems = dns1123_label_errors(name)
    elif gr in builtin.DNS1035_LABEL_NAMES:
        problems = dns1035_label_errors(name)
    elif gr in builtin.PATH_SEGMENT_NAMES:
        problems = path_segment_errors(name)
    else:
        problems = dns1123_subdomain_errors(name)
    return [invalid_value("metadata.name", name, p) for p in problems]


def qualified_name_errors(value: str) -> list[str]:
    """`IsQualifiedName`: an optional DNS-subdomain prefix and `/`, then a name part."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return ["prefix part must be non-empty"]
        errs = [f"prefix part {e}" for e in dns1123_subdomain_errors(prefix)]
        if errs:
            return errs
    else:
        return [
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
            "'123-abc', regex used for validation is "
            f"'{_QUALIFIED_NAME_PART}') with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')"
        ]
    if not name:
        return ["name part must be non-empty"]
    errs = []
    if len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _QUALIFIED_NAME_PART_RE.match(name):
        errs.append(_QUALIFIED_NAME_MSG)
    return errs


# --- metadata ----------------------------------------------------------------------------------


def _string_map(meta: dict[str, Any], field: str) -> dict[str, str]:
    value = meta.get(field)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadRequest(f"metadata.{field}: must be a map of strings")
    for key, item in value.items():
        if not isinstance(item, str):
            raise BadRequest(
                f"metadata.{field}[{key}]: must be a string, not {type(item).__name__} "
                f"(quote it in YAML)"
            )
    return value


def metadata_errors(meta: dict[str, Any], minor: int | None = None) -> list[FieldError]:
    """Labels, annotation keys, finalizers and owner references (not the name)."""
    errors: list[FieldError] = []
    for key, value in _string_map(meta, "labels").items():
        errors += [invalid_value("metadata.labels", key, e) for e in qualified_name_errors(key)]
        value_problems = []
        if len(value) > 63:
            value_problems.append("must be no more than 63 characters")
        if not _LABEL_VALUE_RE.match(value):
            value_problems.append(_LABEL_VALUE_MSG)
        errors += [invalid_value("metadata.labels", value, e) for e in value_problems]
    annotations = _string_map(meta, "annotations")
    for key in annotations:
        errors += [
            invalid_value("metadata.annotations", key, e)
            for e in qualified_name_errors(key.lower())
        ]
    if annotations_size(annotations) > ANNOTATIONS_LIMIT:
        errors.append(too_long_bytes("metadata.annotations", ANNOTATIONS_LIMIT, minor))
    finalizers = meta.get("finalizers")
    if finalizers is not None:
        if not isinstance(finalizers, list) or not all(isinstance(f, str) for f in finalizers):
            raise BadRequest("metadata.finalizers: must be a list of strings")
        for i, fin in enumerate(finalizers):
            errors += [
                invalid_value(f"metadata.finalizers[{i}]", fin, e)
                for e in qualified_name_errors(fin)
            ]
    errors += owner_reference_errors(meta.get("ownerReferences"))
    return errors


def owner_reference_errors(refs: Any) -> list[FieldError]:
    if refs is None:
        return []
    if not isinstance(refs, list) or not all(isinstance(r, dict) for r in refs):
        raise BadRequest("metadata.ownerReferences: must be a list of objects")
    errors: list[FieldError] = []
    path = "metadata.ownerReferences"
    controllers: list[str] = []
    for ref in refs:
        api_version = str(ref.get("apiVersion") or "")
        if not api_version.rpartition("/")[2]:
            errors.append(
                invalid_value(f"{path}.apiVersion", api_version, "version must not be empty")
            )
        for key in ("kind", "name", "uid"):
            if not ref.get(key):
                errors.append(
                    invalid_value(
                        f"{path}.{key}", str(ref.get(key) or ""), f"{key} must not be empty"
                    )
                )
        if ref.get("controller") is True:
            controllers.append(f"{ref.get('kind')}/{ref.get('name')}")
    if len(controllers) > 1:
        errors.append(
            invalid_value(
                path,
                refs,
                'Only one reference can have Controller set to true. Found "true" in references '
                f"for {controllers[0]} and {controllers[1]}",
            )
        )
    return errors


def no_new_finalizers(old: list[str], new: list[str]) -> list[FieldError]:
    extra = sorted(set(new) - set(old))
    if not extra:
        return []
    found = "[]string{" + ", ".join(json.dumps(f) for f in extra) + "}"
    return [
        forbidden(
            "metadata.finalizers",
            "no new finalizers can be added if the object is being deleted, "
            f"found new finalizers {found}",
        )
    ]


def check_type(resource: ResourceInfo, body: Obj) -> None:
    """Fill in apiVersion and kind, or refuse a body that names another type (BadRequest)."""
    api_version = body.get("apiVersion")
    kind = body.get("kind")
    if api_version and api_version != resource.api_version:
        raise BadRequest(
            f"the API version in the data ({api_version}) does not match the expected API "
            f"version ({resource.api_version})"
        )
    if kind and kind != resource.kind:
        raise BadRequest(
            f"the kind in the data ({kind}) does not match the expected kind ({resource.kind})"
        )
    body["apiVersion"] = resource.api_version
    body["kind"] = resource.kind


def duplicate(field: str, value: Any) -> FieldError:
    return FieldError(field, "Duplicate value", "", value, has_value=True)
