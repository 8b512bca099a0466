"""The objects a CRD's schema marks `x-kubernetes-embedded-resource`, checked as
apiextensions-apiserver checks them after the schema (pkg/apiserver/schema/objectmeta,
validation.go): `apiVersion` and `kind` present and well formed, `metadata` held to the rules
of an object's metadata (its name a path segment, as a custom resource's).

Until 1.34 a missing `apiVersion`/`kind` read `Required value: must not be empty`; from 1.34
(f0841a757, "Remove redundant detail messages in field.Required") `Required value`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from reconcile.cluster.memory.golang.printing import go_json, go_quote
from reconcile.cluster.memory.validation import fielderrors, name_rules, objectmeta
from reconcile.cluster.memory.validation.fielderrors import JSON_VALUES_SINCE, FieldWording

Schema = dict[str, Any]
_BARE_REQUIRED_SINCE = 34
_STRING_MAPS = ("labels", "annotations")


def embedded_resource_errors(schema: Schema, obj: Any, minor: int) -> list[fielderrors.FieldError]:
    """What the embedded resources in `obj` break, worded as release 1.`minor` words it."""
    return _walk(schema, obj, "", FieldWording(minor))


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _walk(
    schema: Schema, value: Any, path: str, words: FieldWording
) -> list[fielderrors.FieldError]:
    errors: list[fielderrors.FieldError] = []
    if isinstance(value, dict):
        if schema.get("x-kubernetes-embedded-resource") is True:
            errors += _embedded(value, path, words)
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        additional = schema.get("additionalProperties")
        for key, item in value.items():
            if isinstance(properties.get(key), dict):
                errors += _walk(properties[key], item, _child(path, key), words)
            elif isinstance(additional, dict):
                errors += _walk(additional, item, f"{path}[{key}]", words)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            errors += _walk(schema["items"], item, f"{path}[{i}]", words)
    return errors


def _embedded(obj: dict[str, Any], path: str, words: FieldWording) -> list[fielderrors.FieldError]:
    detail = "" if words.minor >= _BARE_REQUIRED_SINCE else "must not be empty"
    errors = [
        words.required(_child(path, key), detail)
        for key in ("apiVersion", "kind")
        if key not in obj
    ]
    if "apiVersion" in obj:
        errors += _api_version_errors(obj["apiVersion"], _child(path, "apiVersion"), words)
    if "kind" in obj:
        errors += _kind_errors(obj["kind"], _child(path, "kind"), words)
    if isinstance(obj.get("metadata"), dict):
        errors += _metadata_errors(obj["metadata"], _child(path, "metadata"), words)
    return errors


def _api_version_errors(
    value: Any, where: str, words: FieldWording
) -> list[fielderrors.FieldError]:
    if not isinstance(value, str):
        return [words.invalid(where, value, "must be a string")]
    if not value:
        return [words.invalid(where, value, "must not be empty")]
    if value != "/" and value.count("/") > 1:  # schema.ParseGroupVersion
        return [words.invalid(where, value, f"unexpected GroupVersion string: {value}")]
    return []


def _kind_errors(value: Any, where: str, words: FieldWording) -> list[fielderrors.FieldError]:
    if not isinstance(value, str):
        return [words.invalid(where, value, "must be a string")]
    if not value:
        return [words.invalid(where, value, "must not be empty")]
    problems = name_rules.dns1035_label_errors(value.lower())
    if problems:
        detail = "may have mixed case, but should otherwise match: " + ",".join(problems)
        return [words.invalid(where, value, detail)]
    return []


def _well_formed(meta: dict[str, Any]) -> dict[str, Any]:
    """The metadata the server validates: fields of the wrong type were dropped on decoding."""
    kept: dict[str, Any] = {}
    for key, value in meta.items():
        if key in _STRING_MAPS:
            if isinstance(value, dict) and all(isinstance(item, str) for item in value.values()):
                kept[key] = value
        elif key == "finalizers":
            if isinstance(value, list) and all(isinstance(item, str) for item in value):
                kept[key] = value
        elif key == "ownerReferences":
            if isinstance(value, list) and all(isinstance(item, dict) for item in value):
                kept[key] = value
        elif key in ("name", "generateName", "namespace") and isinstance(value, str):
            kept[key] = value
    return kept


def _metadata_errors(
    meta: dict[str, Any], where: str, words: FieldWording
) -> list[fielderrors.FieldError]:
    """ValidateObjectMetaAccessor, with the path-segment name rule custom resources have, in its
    order: generateName, name, namespace, labels, annotations, owner references, finalizers."""
    meta = _well_formed(meta)
    errors: list[fielderrors.FieldError] = []
    generate_name = meta.get("generateName", "")
    for problem in name_rules.path_segment_errors(generate_name) if generate_name else []:
        if problem.startswith("may not contain"):  # a prefix may be `.` or `..`
            errors.append(words.invalid(f"{where}.generateName", generate_name, problem))
    name = meta.get("name") or "fakename"  # the server names a nameless one so it passes
    errors += [
        words.invalid(f"{where}.name", name, p) for p in name_rules.path_segment_errors(name)
    ]
    namespace = meta.get("namespace", "")
    if namespace:
        errors += [
            words.invalid(f"{where}.namespace", namespace, problem)
            for problem in name_rules.dns1123_label_errors(namespace)
        ]
    maps = {key: meta[key] for key in _STRING_MAPS if key in meta}
    errors += [_moved(error, where) for error in objectmeta.metadata_errors(maps, words.minor)]
    errors += [
        _moved(error, where)
        for error in objectmeta.owner_reference_errors(meta.get("ownerReferences"))
    ]
    return errors + _finalizer_errors(meta.get("finalizers") or [], f"{where}.finalizers", words)


def _moved(error: fielderrors.FieldError, where: str) -> fielderrors.FieldError:
    """An error of an object's own metadata, moved to the embedded object's."""
    return dataclasses.replace(error, field=where + error.field[len("metadata") :])


def _finalizer_errors(
    finalizers: list[str], where: str, words: FieldWording
) -> list[fielderrors.FieldError]:
    """ValidateFinalizers: every error names the list, not the item."""
    errors = [
        words.invalid(where, finalizer, problem)
        for finalizer in finalizers
        for problem in name_rules.qualified_name_errors(finalizer)
    ]
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        listed = ", ".join(go_quote(f) for f in finalizers)
        shown = go_json(finalizers) if words.minor >= JSON_VALUES_SINCE else f"[]string{{{listed}}}"
        detail = "finalizer orphan and foregroundDeletion cannot be both set"
        errors.append(words.invalid(where, fielderrors.GoLiteral(shown), detail))
    return errors
