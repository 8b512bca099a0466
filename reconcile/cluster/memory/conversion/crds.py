"""CustomResourceDefinitions between apiextensions.k8s.io/v1 and v1beta1, as kube-apiserver
converts them, and what v1beta1 defaults and refuses.

v1beta1 defaults `scope: Namespaced`, `preserveUnknownFields: true`, one of `version` and
`versions` from the other, and holds `validation`, `subresources` and
`additionalPrinterColumns` (whose `JSONPath` is v1's `jsonPath`) either once for all versions
or per version; v1 holds them per version. A v1 CRD reads as v1beta1 with what every version
shares held once. A v1beta1 schema may not set `default`s."""

from __future__ import annotations

from typing import Any

from reconcile.cluster.memory.validation import fielderrors
from reconcile.objects.jsondata import normalized_copy
from reconcile.objects.meta import Obj

_PER_VERSION = (
    ("validation", "schema"),
    ("subresources", "subresources"),
    ("additionalPrinterColumns", "additionalPrinterColumns"),
)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _versions(spec: dict[str, Any]) -> list[dict[str, Any]]:
    raw = spec.get("versions")
    return [x for x in raw if isinstance(x, dict)] if isinstance(raw, list) else []


def version_defaults(crd: Obj) -> None:
    """v1beta1's defaults, in place."""
    spec = crd.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    spec.setdefault("scope", "Namespaced")
    spec.setdefault("preserveUnknownFields", True)
    conversion = spec.setdefault("conversion", {"strategy": "None"})
    if isinstance(conversion, dict):
        conversion.setdefault("strategy", "None")
        if conversion["strategy"] == "Webhook":
            conversion.setdefault("conversionReviewVersions", ["v1beta1"])
    versions = _versions(spec)
    if not versions and spec.get("version"):
        spec["versions"] = [{"name": spec["version"], "served": True, "storage": True}]
    elif versions and not spec.get("version"):
        spec["version"] = versions[0].get("name")


def v1beta1_errors(crd: Obj) -> list[fielderrors.FieldError]:
    """What v1beta1 refuses that v1 allows: `default`s in a schema."""
    spec = _dict(crd.get("spec"))
    errors: list[fielderrors.FieldError] = []
    top = _dict(_dict(spec.get("validation")).get("openAPIV3Schema"))
    errors += _defaults_set(top, "spec.validation.openAPIV3Schema")
    for i, version in enumerate(_versions(spec)):
        schema = _dict(_dict(version.get("schema")).get("openAPIV3Schema"))
        errors += _defaults_set(schema, f"spec.versions[{i}].schema.openAPIV3Schema")
    return errors


def _defaults_set(schema: dict[str, Any], path: str) -> list[fielderrors.FieldError]:
    errors: list[fielderrors.FieldError] = []
    if "default" in schema:
        errors.append(
            fielderrors.forbidden(
                f"{path}.default",
                "must not be set (cannot set default values in apiextensions.k8s.io/v1beta1 "
                "CRDs, must use apiextensions.k8s.io/v1)",
            )
        )
    for key, child in sorted(_dict(schema.get("properties")).items()):
        errors += _defaults_set(_dict(child), f"{path}.properties[{key}]")
    if isinstance(schema.get("items"), dict):
        errors += _defaults_set(schema["items"], f"{path}.items")
    if isinstance(schema.get("additionalProperties"), dict):
        errors += _defaults_set(schema["additionalProperties"], f"{path}.additionalProperties")
    return errors


def to_v1(crd: Obj) -> Obj:
    out: Obj = normalized_copy(crd)
    spec = _dict(out.get("spec"))
    shared = {new: spec.pop(old, None) for old, new in _PER_VERSION}
    spec.pop("version", None)
    for version in _versions(spec):
        for key, value in shared.items():
            if value is not None and key not in version:
                version[key] = normalized_copy(value)
        columns = version.get("additionalPrinterColumns")
        if isinstance(columns, list):
            version["additionalPrinterColumns"] = [
                _renamed(c, "JSONPath", "jsonPath") for c in columns
            ]
    if spec.get("preserveUnknownFields") is False:
        del spec["preserveUnknownFields"]
    conversion = _dict(spec.get("conversion"))
    webhook = {}
    if "webhookClientConfig" in conversion:
        webhook["clientConfig"] = conversion.pop("webhookClientConfig")
    if "conversionReviewVersions" in conversion:
        webhook["conversionReviewVersions"] = conversion.pop("conversionReviewVersions")
    if webhook:
        conversion["webhook"] = webhook
    return out


def to_v1beta1(crd: Obj) -> Obj:
    out: Obj = normalized_copy(crd)
    spec = _dict(out.get("spec"))
    versions = _versions(spec)
    if versions:
        spec["version"] = versions[0].get("name")
    for old, new in _PER_VERSION:
        values = [version.get(new) for version in versions]
        if versions and values[0] is not None and all(x == values[0] for x in values):
            spec[old] = values[0]
            for version in versions:
                version.pop(new, None)
    for holder in (spec, *versions):
        columns = holder.get("additionalPrinterColumns")
        if isinstance(columns, list):
            holder["additionalPrinterColumns"] = [
                _renamed(c, "jsonPath", "JSONPath") for c in columns
            ]
    spec["preserveUnknownFields"] = bool(spec.get("preserveUnknownFields"))
    conversion = _dict(spec.get("conversion"))
    webhook = _dict(conversion.pop("webhook", None))
    if "clientConfig" in webhook:
        conversion["webhookClientConfig"] = webhook["clientConfig"]
    if "conversionReviewVersions" in webhook:
        conversion["conversionReviewVersions"] = webhook["conversionReviewVersions"]
    return out


def _renamed(column: Any, old: str, new: str) -> Any:
    if not isinstance(column, dict) or old not in column:
        return column
    return {(new if k == old else k): value for k, value in column.items()}


def non_structural(crd: Obj) -> list[str]:
    """Why the v1 `crd`'s schemas are not structural, as the NonStructuralSchema condition
    says it (only v1beta1 lets such a CRD be made)."""
    spec = _dict(crd.get("spec"))
    found: list[str] = []
    if spec.get("preserveUnknownFields") is True:
        found.append("spec.preserveUnknownFields: Invalid value: true: must be false")
    for i, version in enumerate(_versions(spec)):
        schema = _dict(version.get("schema")).get("openAPIV3Schema")
        if isinstance(schema, dict):
            found += _untyped(schema, f"spec.versions[{i}].schema.openAPIV3Schema", "root")
    return found


def _untyped(schema: dict[str, Any], path: str, where: str) -> list[str]:
    found: list[str] = []
    for key, child in sorted(_dict(schema.get("properties")).items()):
        if isinstance(child, dict):
            found += _untyped(child, f"{path}.properties[{key}]", "field")
    if isinstance(schema.get("items"), dict):
        found += _untyped(schema["items"], f"{path}.items", "items")
    free = schema.get("x-kubernetes-int-or-string") or schema.get(
        "x-kubernetes-preserve-unknown-fields"
    )
    if not schema.get("type") and not free:
        what = {
            "root": "at the root",
            "field": "for specified object fields",
            "items": "for specified array items",
        }[where]
        found.append(f"{path}.type: Required value: must not be empty {what}")
    return found
