"""Hook responses, validated into typed values; problems name the field in the response."""

from __future__ import annotations

from dataclasses import field
from typing import Any

from reconcile.objects.meta import Obj
from reconcile.objects.names import metadata_problems
from reconcile.records import dataclass


class ParentError(ValueError):
    """A parent that cannot be synced as it is (its spec, or what the hooks made of it):
    nothing is changed for it, and the other parents go on."""


class PlanError(ParentError):
    """The parent cannot be synced; `problems` says why. Nothing is changed for it."""

    def __init__(self, parent: Obj, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.parent = parent
        self.problems = problems


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
