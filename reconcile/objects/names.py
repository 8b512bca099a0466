"""The API server's rules for object names, namespaces, labels and annotation keys
(k8s.io/apimachinery validation), checked before anything is sent: a hook's mistake is then an
error naming the field, never a request refused after the parent's other writes."""

from __future__ import annotations

from typing import Any

from reconcile.objects.lazy_pattern import on_first_use

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL = on_first_use(rf"^{_LABEL}$")
_DNS1123_SUBDOMAIN = on_first_use(rf"^{_LABEL}(\.{_LABEL})*$")
_DNS1035_LABEL = on_first_use(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_QUALIFIED_NAME = on_first_use(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_LABEL_VALUE = on_first_use(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")

# Kinds whose names follow another rule than the usual DNS subdomain.
_DNS1035_KINDS = frozenset({("", "Service")})
_DNS1123_LABEL_KINDS = frozenset({("", "Namespace")})
_PATH_SEGMENT_GROUPS = frozenset({"rbac.authorization.k8s.io"})


def _subdomain_problem(text: str) -> str | None:
    if len(text) > 253:
        return f"{_show(text)} is longer than 253 characters"
    if not _DNS1123_SUBDOMAIN().match(text):
        return (
            f"{_show(text)} is not a lowercase RFC 1123 subdomain (lower-case letters, digits, "
            "'-' and '.', starting and ending with a letter or digit)"
        )
    return None


def name_problem(api_version: str, kind: str, name: str) -> str | None:
    """Why the API server would refuse `name` for an object of this kind, or None."""
    group = api_version.rpartition("/")[0]
    if name in (".", "..") or "/" in name or "%" in name:
        return f"{_show(name)} may not be '.' or '..' nor contain '/' or '%'"
    if group in _PATH_SEGMENT_GROUPS:
        return None
    if (group, kind) in _DNS1035_KINDS:
        if len(name) > 63 or not _DNS1035_LABEL().match(name):
            return (
                f"{_show(name)} is not an RFC 1035 label (at most 63 lower-case letters, "
                "digits and '-', starting with a letter)"
            )
        return None
    if (group, kind) in _DNS1123_LABEL_KINDS:
        return namespace_problem(name)
    return _subdomain_problem(name)


def namespace_problem(namespace: str) -> str | None:
    if len(namespace) > 63 or not _DNS1123_LABEL().match(namespace):
        return (
            f"{_show(namespace)} is not an RFC 1123 label (at most 63 lower-case letters, "
            "digits and '-')"
        )
    return None


def qualified_name_problem(key: str) -> str | None:
    """A label or annotation key: `[prefix/]name`."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or _subdomain_problem(prefix)):
        return f"{_show(key)}: the prefix must be a DNS subdomain"
    if not name or len(name) > 63 or not _QUALIFIED_NAME().match(name):
        return (
            f"{_show(key)} is not a qualified name (at most 63 letters, digits, '-', '_' and "
            "'.', starting and ending with a letter or digit, after an optional prefix/)"
        )
    return None


def label_value_problem(value: str) -> str | None:
    if len(value) > 63 or not _LABEL_VALUE().match(value):
        return (
            f"{_show(value)} is not a label value (at most 63 letters, digits, '-', '_' and '.', "
            "starting and ending with a letter or digit)"
        )
    return None


def metadata_problems(obj: dict[str, Any], where: str) -> list[str]:
    """Every problem of an object's name, namespace, labels and annotation keys, each prefixed
    with `where` and the field."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return []
    problems: list[str] = []
    name = meta.get("name")
    if isinstance(name, str) and name:
        problem = name_problem(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""), name)
        if problem:
            problems.append(f"{where}.metadata.name: {problem}")
    namespace = meta.get("namespace")
    if namespace not in (None, ""):
        problem = (
            namespace_problem(namespace)
            if isinstance(namespace, str)
            else f"must be a string, not {_show(namespace)}"
        )
        if problem:
            problems.append(f"{where}.metadata.namespace: {problem}")
    for field in ("labels", "annotations"):
        problems += map_problems(
            meta.get(field), f"{where}.metadata.{field}", labels=field == "labels"
        )
    return problems


#: The most all of an object's annotations may hold, keys and values (apimachinery's
#: TotalAnnotationSizeLimitB).
ANNOTATIONS_LIMIT = 256 * 1024


def annotations_size(annotations: dict[Any, Any]) -> int:
    """The size the API server counts against ANNOTATIONS_LIMIT: bytes of keys and values."""
    return sum(
        len(str(k).encode()) + len(v.encode() if isinstance(v, str) else b"")
        for k, v in annotations.items()
    )


# Annotation keys and labels found good, each checked once: the same few come on every
# object a run checks. Bounded: a run with more distinct ones checks the rest every time.
_GOOD_KEYS: set[str] = set()
_GOOD_LABELS: set[tuple[str, str]] = set()
_GOOD_KEPT = 4096


def map_problems(value: Any, where: str, *, labels: bool) -> list[str]:
    """The problems of a labels (keys and values) or annotations (keys) map, as the API server
    finds them; a null value (a key to delete) is fine."""
    if value is None:
        return []
    if not isinstance(value, dict):
        return [f"{where}: must be a map of strings"]
    problems = []
    for key, item in value.items():
        if item is None:
            continue  # the API server reads null as ""
        if not isinstance(item, str):
            problems.append(f"{where}[{_show(key)}]: must be a string, not {_show(item)}")
            continue
        if (key in _GOOD_KEYS and not labels) or (key, item) in _GOOD_LABELS:
            continue
        problem = qualified_name_problem(str(key))
        if problem is None and labels:
            problem = label_value_problem(item)
        if problem:
            problems.append(f"{where}[{_show(key)}]: {problem}")
        elif len(_GOOD_KEYS) + len(_GOOD_LABELS) < _GOOD_KEPT:
            if labels:
                _GOOD_LABELS.add((key, item))
            else:
                _GOOD_KEYS.add(key)
    if not labels and annotations_size(value) > ANNOTATIONS_LIMIT:
        problems.append(f"{where}: Too long: must have at most {ANNOTATIONS_LIMIT} bytes")
    return problems


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
