"""apimachinery's rules for an object's metadata (pkg/api/validation/objectmeta.go): its name
under its resource's rule, labels, annotations, finalizers and owner references, and the type a
body names."""

from __future__ import annotations

import json
from typing import Any

from reconcile.cluster.errors import BadRequest
from reconcile.cluster.memory.validation import name_rules
from reconcile.cluster.memory.validation.fielderrors import (
    FieldError,
    forbidden,
    invalid_value,
    too_long_bytes,
)
from reconcile.cluster.types import Obj, ResourceInfo
from reconcile.objects.names import ANNOTATIONS_LIMIT, annotations_size

# How each resource's names are validated (anything not listed: a DNS-1123 subdomain).
DNS1123_LABEL_NAMES = frozenset({"namespaces"})
DNS1035_LABEL_NAMES = frozenset({"services"})
PATH_SEGMENT_NAMES = frozenset(
    {
        "roles.rbac.authorization.k8s.io",
        "rolebindings.rbac.authorization.k8s.io",
        "clusterroles.rbac.authorization.k8s.io",
        "clusterrolebindings.rbac.authorization.k8s.io",
    }
)


def name_errors(resource: ResourceInfo, name: str) -> list[FieldError]:
    """The errors `metadata.name` gets under the resource's name rule."""
    gr = resource.group_resource
    if gr in DNS1123_LABEL_NAMES:
        problems = name_rules.dns1123_label_errors(name)
    elif gr in DNS1035_LABEL_NAMES:
        problems = name_rules.dns1035_label_errors(name)
    elif gr in PATH_SEGMENT_NAMES:
        problems = name_rules.path_segment_errors(name)
    else:
        problems = name_rules.dns1123_subdomain_errors(name)
    return [invalid_value("metadata.name", name, p) for p in problems]


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
        errors += [
            invalid_value("metadata.labels", key, e) for e in name_rules.qualified_name_errors(key)
        ]
        errors += [
            invalid_value("metadata.labels", value, e) for e in name_rules.label_value_errors(value)
        ]
    annotations = _string_map(meta, "annotations")
    for key in annotations:
        errors += [
            invalid_value("metadata.annotations", key, e)
            for e in name_rules.qualified_name_errors(key.lower())
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
                for e in name_rules.qualified_name_errors(fin)
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
