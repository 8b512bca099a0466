"""Hook responses, validated into typed values; problems name the field in the response."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reconcile.objects.meta import Obj
from reconcile.objects.names import metadata_problems
from reconcile.objects.selectors import LabelSelector, SelectorError, label_selector_from_spec


class ParentError(ValueError):
    """A parent that cannot be synced as it is (its spec, or what the hooks made of it):
    nothing is changed for it, and the other parents go on."""


class ResponseError(ParentError):
    """A hook answered with something unusable; `problems` lists each one."""

    def __init__(self, hook: str, problems: list[str]) -> None:
        super().__init__(f"{hook} hook response: " + "; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class SyncResponse:
    status: dict[str, Any] | None = None
    children: list[Obj] = field(default_factory=list)
    resync_after: float | None = None
    finalized: bool = False


MAX_SECONDS = 365 * 24 * 3600


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def seconds_field(data: dict[str, Any], key: str, problems: list[str]) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        problems.append(f"{key}: must be a number of seconds >= 0, not {_short(value)}")
        return None
    # Beyond a year is "not this run" anyway; a bigger number must not overflow a clock.
    return float(min(value, MAX_SECONDS))


def object_list(raw: Any, field: str, problems: list[str]) -> list[Obj]:
    """A response's list of objects (`children`, `attachments`; null is empty), each with
    `apiVersion`, `kind` and `metadata.name`; what is wrong goes to `problems`."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        problems.append(f"{field}: must be a list of objects")
        return []
    objects: list[Obj] = []
    for i, item in enumerate(raw):
        where = f"{field}[{i}]"
        if not isinstance(item, dict):
            problems.append(f"{where}: must be an object")
            continue
        for key in ("apiVersion", "kind"):
            if not isinstance(item.get(key), str) or not item.get(key):
                problems.append(f"{where}.{key}: is required")
        meta = item.get("metadata")
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
            problems.append(f"{where}.metadata.name: is required")
        problems += metadata_problems(item, where)
        objects.append(item)
    return objects


SYNC_FIELDS = ("status", "children", "resyncAfterSeconds", "finalized")
CUSTOMIZE_FIELDS = ("relatedResources",)
RELATED_FIELDS = ("apiVersion", "resource", "labelSelector", "namespace", "names")


def unknown_fields(data: dict[str, Any], known: tuple[str, ...], where: str = "") -> list[str]:
    """A strict answer's problems: each field that is not one of `known`, named (Metacontroller's
    responseUnMarshallMode: strict)."""
    expected = ", ".join(known)
    return [
        f"{where}{key}: unknown field (a strict hook answers only {expected})"
        for key in data
        if key not in known
    ]


def parse_sync_response(
    data: dict[str, Any], hook: str = "sync", *, strict: bool = False
) -> SyncResponse:
    problems: list[str] = unknown_fields(data, SYNC_FIELDS) if strict else []
    status = data.get("status")
    if status is not None and not isinstance(status, dict):
        problems.append(f"status: must be an object or null, not {type(status).__name__}")
        status = None
    children = object_list(data.get("children"), "children", problems)
    finalized = data.get("finalized")
    if finalized is None:  # absent or null: not finalized (as Go's JSON decoding reads it)
        finalized = False
    if not isinstance(finalized, bool):
        problems.append(f"finalized: must be true or false, not {finalized!r}")
        finalized = False
    resync_after = seconds_field(data, "resyncAfterSeconds", problems)
    if problems:
        raise ResponseError(hook, problems)
    return SyncResponse(
        status=status, children=children, resync_after=resync_after, finalized=finalized
    )


@dataclass(frozen=True)
class RelatedRule:
    """From the customize hook: objects the sync hook wants to see without owning them."""

    api_version: str
    resource: str
    selector: LabelSelector | None = None  # set: by label selector
    namespace: str | None = None  # set with names: by name
    names: tuple[str, ...] = ()


def parse_customize_response(data: dict[str, Any], *, strict: bool = False) -> list[RelatedRule]:
    problems: list[str] = unknown_fields(data, CUSTOMIZE_FIELDS) if strict else []
    raw = data.get("relatedResources")
    if raw is None:
        raw = []
    if not isinstance(raw, list):
        raise ResponseError("customize", ["relatedResources: must be a list"])
    rules: list[RelatedRule] = []
    for i, item in enumerate(raw):
        where = f"relatedResources[{i}]"
        if not isinstance(item, dict):
            problems.append(f"{where}: must be an object")
            continue
        if strict:
            problems += unknown_fields(item, RELATED_FIELDS, f"{where}.")
        api_version, resource = item.get("apiVersion"), item.get("resource")
        if not isinstance(api_version, str) or not api_version:
            problems.append(f"{where}.apiVersion: is required")
        if not isinstance(resource, str) or not resource:
            problems.append(f"{where}.resource: is required")
        by_selector = "labelSelector" in item and item["labelSelector"] is not None
        by_name = item.get("namespace") is not None or item.get("names") is not None
        if by_selector and by_name:
            problems.append(f"{where}: labelSelector and namespace/names are exclusive")
            continue
        names = item.get("names") or []
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            problems.append(f"{where}.names: must be a list of strings")
            continue
        namespace = item.get("namespace")
        if namespace is not None and not isinstance(namespace, str):
            problems.append(f"{where}.namespace: must be a string")
            continue
        selector: LabelSelector | None = None
        if by_selector or not by_name:
            try:
                selector = label_selector_from_spec(
                    item.get("labelSelector"), f"{where}.labelSelector"
                )
            except SelectorError as exc:
                problems.append(str(exc))
                continue
        if isinstance(api_version, str) and isinstance(resource, str):
            rules.append(
                RelatedRule(
                    api_version=api_version,
                    resource=resource,
                    selector=selector,
                    namespace=namespace or None,
                    names=tuple(names),
                )
            )
    if problems:
        raise ResponseError("customize", problems)
    return rules
