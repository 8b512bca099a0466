"""Field selectors: which field labels each resource supports, and how their values are read.

Like the API server, only a fixed set of fields per resource can be selected on; any other label
is a BadRequest (`field label not supported: X`).
"""

from __future__ import annotations

from collections.abc import Callable

from reconcile.cluster.errors import BadRequest
from reconcile.cluster.types import Obj
from reconcile.objects.selectors import SelectorError, field_value, parse_field_selector

Extractor = Callable[[Obj], str]
Matcher = Callable[[Obj], bool]


def _path(path: str) -> Extractor:
    return lambda obj: field_value(obj, path)


def _int(path: str) -> Extractor:
    def read(obj: Obj) -> str:
        return field_value(obj, path) or "0"

    return read


def _bool(path: str) -> Extractor:
    def read(obj: Obj) -> str:
        return field_value(obj, path) or "false"

    return read


_COMMON: dict[str, Extractor] = {
    "metadata.name": _path("metadata.name"),
    "metadata.namespace": _path("metadata.namespace"),
}


def _event_fields(regarding: str, source: str) -> dict[str, Extractor]:
    fields = {
        f"involvedObject.{f}": _path(f"{regarding}.{f}")
        for f in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
    }
    fields.update({"reason": _path("reason"), "source": _path(source), "type": _path("type")})
    return fields


_BY_RESOURCE: dict[str, dict[str, Extractor]] = {
    "pods": {
        p: _path(p)
        for p in (
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        )
    },
    "secrets": {"type": _path("type")},
    "events": _event_fields("involvedObject", "source.component"),
    "events.events.k8s.io": _event_fields("regarding", "deprecatedSource.component"),
    "namespaces": {"status.phase": _path("status.phase")},
    "nodes": {"spec.unschedulable": _bool("spec.unschedulable")},
    "replicationcontrollers": {"status.replicas": _int("status.replicas")},
    "replicasets.apps": {"status.replicas": _int("status.replicas")},
    "jobs.batch": {"status.successful": _int("status.successful")},
}


def field_matcher(group_resource: str, selector: str | None) -> Matcher | None:
    """A predicate for `selector` on objects of `group_resource`; None when it selects all."""
    try:
        parsed = parse_field_selector(selector)
    except SelectorError as e:
        raise BadRequest(str(e)) from e
    if not parsed.requirements:
        return None
    supported = {**_COMMON, **_BY_RESOURCE.get(group_resource, {})}
    checks: list[tuple[Extractor, str, bool]] = []
    for req in parsed.requirements:
        extractor = supported.get(req.path)
        if extractor is None:
            raise BadRequest(f"field label not supported: {req.path}")
        checks.append((extractor, req.value, req.negate))

    def matches(obj: Obj) -> bool:
        return all(
            (read(obj) != value) if negate else (read(obj) == value)
            for read, value, negate in checks
        )

    return matches
