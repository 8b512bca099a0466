"""CustomResourceDefinitions: validation, defaulting, the status the API server sets, and the
resources a CRD makes the server serve."""

from __future__ import annotations

from typing import Any

from reconcile.cluster.memory.cel import rule_definition_errors
from reconcile.cluster.memory.conversion.crds import non_structural
from reconcile.cluster.memory.openapi.patterns import pattern_definition_errors
from reconcile.cluster.memory.resources.catalog import STANDARD_VERBS
from reconcile.cluster.memory.validation import fielderrors, name_rules
from reconcile.cluster.types import Obj, ResourceInfo
from reconcile.objects.jsondata import string_list

CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
SCOPES = ("Cluster", "Namespaced")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _spec(crd: Obj) -> dict[str, Any]:
    return _dict(crd.get("spec"))


def _names(crd: Obj) -> dict[str, Any]:
    return _dict(_spec(crd).get("names"))


def _versions(crd: Obj) -> list[dict[str, Any]]:
    versions = _spec(crd).get("versions")
    return [x for x in versions if isinstance(x, dict)] if isinstance(versions, list) else []


def group_resource_of(crd: Obj) -> str:
    """`<plural>.<group>`: the CRD's required name and its resources' group_resource."""
    return f"{_names(crd).get('plural') or ''}.{_spec(crd).get('group') or ''}"


def apply_defaults(crd: Obj) -> None:
    """The defaults apiextensions.k8s.io/v1 sets (in place)."""
    spec = crd.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict):
        kind = names.get("kind")
        if not names.get("singular") and kind:
            names["singular"] = str(kind).lower()
        if not names.get("listKind") and kind:
            names["listKind"] = f"{kind}List"
    if not isinstance(spec.get("conversion"), dict):
        spec["conversion"] = {"strategy": "None"}


APPROVAL_ANNOTATION = "api-approved.kubernetes.io"


def _protected(group: str) -> bool:
    """*.k8s.io and *.kubernetes.io groups need API review (KEP 1111)."""
    return any(group == d or group.endswith("." + d) for d in ("k8s.io", "kubernetes.io"))


def validate(
    crd_resource: ResourceInfo, crd: Obj, old: Obj | None = None, *, minor: int | None = None
) -> None:
    """Raise Invalid for a CRD the API server would refuse (the common mistakes, not all);
    `minor`: the release, whose CEL environment the schemas' rules must compile in (None: the
    rules are not checked)."""
    name = str(_dict(crd.get("metadata")).get("name") or "")
    spec, names = _spec(crd), _names(crd)
    group = str(spec.get("group") or "")
    errors: list[fielderrors.FieldError] = []
    if not name:
        errors.append(fielderrors.required("metadata.name", "name or generateName is required"))
    else:
        errors += [
            fielderrors.invalid_value("metadata.name", name, e)
            for e in name_rules.dns1123_subdomain_errors(name)
        ]
        if name != group_resource_of(crd):
            errors.append(
                fielderrors.invalid_value(
                    "metadata.name", name, 'must be spec.names.plural+"."+spec.group'
                )
            )
    if not group:
        errors.append(fielderrors.required("spec.group"))
    elif problems := name_rules.dns1123_subdomain_errors(group):
        errors.append(fielderrors.invalid_value("spec.group", group, ",".join(problems)))
    elif "." not in group:
        errors.append(
            fielderrors.invalid_value(
                "spec.group", group, "should be a domain with at least one dot"
            )
        )
    if _protected(group) and not _dict(_dict(crd.get("metadata")).get("annotations")).get(
        APPROVAL_ANNOTATION
    ):
        errors.append(
            fielderrors.required(
                f"metadata.annotations[{APPROVAL_ANNOTATION}]",
                f'protected groups must have approval annotation "{APPROVAL_ANNOTATION}", '
                "see https://github.com/kubernetes/enhancements/pull/1111",
            )
        )
    scope = str(spec.get("scope") or "")
    if not scope:
        errors.append(fielderrors.required("spec.scope"))
    elif scope not in SCOPES:
        errors.append(fielderrors.unsupported("spec.scope", scope, list(SCOPES)))
    errors += _version_errors(spec, minor)
    for field in ("plural", "singular", "kind", "listKind"):
        if not names.get(field):
            errors.append(fielderrors.required(f"spec.names.{field}"))
    for field in ("plural", "singular"):
        value = str(names.get(field) or "")
        if value:
            errors += [
                fielderrors.invalid_value(f"spec.names.{field}", value, e)
                for e in name_rules.dns1123_label_errors(value)
            ]
    if old is not None:
        old_spec = _spec(old)
        for field, new_value, old_value in (
            ("spec.group", group, old_spec.get("group")),
            ("spec.names.plural", names.get("plural"), _names(old).get("plural")),
            ("spec.scope", scope, old_spec.get("scope")),
            ("spec.names.kind", names.get("kind"), _names(old).get("kind")),
        ):
            if new_value != old_value:
                errors.append(fielderrors.invalid_value(field, new_value, "field is immutable"))
    fielderrors.raise_invalid(crd_resource, name, errors, minor=minor)


def _version_errors(spec: dict[str, Any], minor: int | None) -> list[fielderrors.FieldError]:
    raw = spec.get("versions")
    versions = raw if isinstance(raw, list) else []
    errors: list[fielderrors.FieldError] = []
    seen: set[str] = set()
    storage = 0
    for i, version in enumerate(versions):
        path = f"spec.versions[{i}]"
        if not isinstance(version, dict):
            errors.append(fielderrors.invalid_value(path, version, "must be an object"))
            continue
        vname = str(version.get("name") or "")
        errors += [
            fielderrors.invalid_value(f"{path}.name", vname, e)
            for e in name_rules.dns1035_label_errors(vname)
        ]
        if vname in seen:
            errors.append(
                fielderrors.invalid_value(
                    "spec.versions", vname, "must contain unique version names"
                )
            )
        seen.add(vname)
        if version.get("storage") is True:
            storage += 1
        schema = _dict(version.get("schema")).get("openAPIV3Schema")
        if not isinstance(schema, dict):
            if spec.get("preserveUnknownFields") is not True:  # a CRD made as v1beta1
                errors.append(
                    fielderrors.required(f"{path}.schema.openAPIV3Schema", "schemas are required")
                )
        elif minor is not None:
            at = f"{path}.schema.openAPIV3Schema"
            invalid_patterns = pattern_definition_errors(schema, at, minor)
            errors += invalid_patterns  # the server compiles no rule of such a schema
            errors += [] if invalid_patterns else rule_definition_errors(schema, at, minor)
    if storage != 1:
        errors.append(
            fielderrors.invalid_value(
                "spec.versions", versions, "must have exactly one version marked as storage version"
            )
        )
    return errors


def initial_status(crd: Obj, now: str, old_status: Any = None) -> dict[str, Any]:
    """What the naming, establishing and non-structural-schema controllers set: accepted
    names, conditions (`NonStructuralSchema` for a CRD made as v1beta1 whose schemas are not
    structural), stored versions (kept from `old_status` where they have them)."""
    old = _dict(old_status)
    names = {k: val for k, val in _names(crd).items() if val not in (None, "", [])}
    conditions = [
        {
            "type": "NamesAccepted",
            "status": "True",
            "reason": "NoConflicts",
            "message": "no conflicts found",
            "lastTransitionTime": now,
        },
        {
            "type": "Established",
            "status": "True",
            "reason": "InitialNamesAccepted",
            "message": "the initial names have been accepted",
            "lastTransitionTime": now,
        },
    ]
    old_conditions = [c for c in old.get("conditions") or [] if isinstance(c, dict)]
    by_type = {str(c.get("type")): c for c in old_conditions}
    for i, condition in enumerate(conditions):
        previous = by_type.get(condition["type"])
        if previous and previous.get("status") == condition["status"]:
            conditions[i] = dict(previous)
    ours = {"NamesAccepted", "Established", "NonStructuralSchema"}
    conditions += [dict(c) for c in old_conditions if c.get("type") not in ours]
    violations = non_structural(crd)
    if violations:
        message = violations[0] if len(violations) == 1 else "[" + ", ".join(violations) + "]"
        condition = {
            "type": "NonStructuralSchema",
            "status": "True",
            "reason": "Violations",
            "message": message,
            "lastTransitionTime": now,
        }
        previous = by_type.get("NonStructuralSchema")
        if previous and previous.get("message") == message:
            condition = dict(previous)
        conditions.insert(0, condition)
    stored = string_list(old.get("storedVersions"))
    storage = storage_version(crd)
    if storage and storage not in stored:
        stored.append(storage)
    return {"acceptedNames": names, "conditions": conditions, "storedVersions": stored}


def terminating_condition(now: str) -> dict[str, Any]:
    return {
        "type": "Terminating",
        "status": "True",
        "reason": "InstanceDeletionInProgress",
        "message": "CustomResource deletion is in progress",
        "lastTransitionTime": now,
    }


def storage_version(crd: Obj) -> str:
    for version in _versions(crd):
        if version.get("storage") is True:
            return str(version.get("name") or "")
    return ""


def resources(crd: Obj) -> tuple[ResourceInfo, list[ResourceInfo]]:
    """(the storage version's resource, the resources of every served version)."""
    spec, names = _spec(crd), _names(crd)
    short_names = tuple(string_list(names.get("shortNames")))
    kind = str(names.get("kind") or "")

    def info(version: dict[str, Any]) -> ResourceInfo:
        subresources = _dict(version.get("subresources"))
        return ResourceInfo(
            group=str(spec.get("group") or ""),
            version=str(version.get("name") or ""),
            resource=str(names.get("plural") or ""),
            kind=kind,
            namespaced=spec.get("scope") == "Namespaced",
            has_status="status" in subresources and subresources["status"] is not None,
            verbs=STANDARD_VERBS,
            short_names=short_names,
            singular=str(names.get("singular") or kind.lower()),
        )

    versions = _versions(crd)
    served = [info(x) for x in versions if x.get("served") is True]
    storage = next((info(x) for x in versions if x.get("storage") is True), None)
    if storage is None:
        storage = served[0] if served else info(versions[0] if versions else {})
    return storage, served


def preserves_unknown_fields(crd: Obj) -> bool:
    """A CRD made as v1beta1 keeps its objects' unknown fields (`preserveUnknownFields`)."""
    return _spec(crd).get("preserveUnknownFields") is True


def schema_of(crd: Obj, version: str) -> dict[str, Any] | None:
    """The `openAPIV3Schema` of one version."""
    for entry in _versions(crd):
        if entry.get("name") == version:
            schema = _dict(entry.get("schema")).get("openAPIV3Schema")
            return schema if isinstance(schema, dict) else None
    return None
