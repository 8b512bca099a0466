"""A DecoratorController's hook wire: which of a target's objects are its attachments, the sync
(or finalize) request, and the answer read into a `DecoratorResponse`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from reconcile.engine.keys import rekeyed, request_key
from reconcile.engine.responses import ResponseError, object_list, seconds_field, unknown_fields
from reconcile.objects.meta import Obj, annotations_of, controller_ref, uid_of
from reconcile.objects.names import map_problems
from reconcile.records import dataclass
from reconcile.specs.decorator import DECORATOR_ANNOTATION, DecoratorController


@dataclass
class DecoratorResponse:
    labels: dict[str, str | None] = field(default_factory=dict)
    annotations: dict[str, str | None] = field(default_factory=dict)
    status: dict[str, Any] | None = None
    attachments: list[Obj] = field(default_factory=list)
    resync_after: float | None = None
    finalized: bool = False


def is_attachment(controller: DecoratorController, target: Obj, obj: Obj) -> bool:
    """Controlled by the target and marked as this decorator's."""
    ref = controller_ref(obj)
    return (
        ref is not None
        and ref.get("uid") == uid_of(target)
        and annotations_of(obj).get(DECORATOR_ANNOTATION) == controller.name
    )


def sync_request(
    controller: DecoratorController,
    target: Obj,
    target_namespaced: bool,
    attachments: Mapping[str, list[Obj]],
    related: Mapping[str, Mapping[str, Obj]],
    *,
    finalizing: bool,
    uniform: bool = False,
) -> dict[str, Any]:
    """`related` is keyed already (as the customize hook's objects are); `uniform`: every map
    keyed `namespace/name` (hook version v2)."""
    return {
        "controller": controller.raw,
        "object": target,
        "attachments": {
            key: {request_key(target_namespaced, obj, uniform): obj for obj in objs}
            for key, objs in attachments.items()
        },
        "related": {key: rekeyed(objs, uniform) for key, objs in related.items()},
        "finalizing": finalizing,
    }


DECORATOR_FIELDS = (
    "labels",
    "annotations",
    "status",
    "attachments",
    "resyncAfterSeconds",
    "finalized",
)


def parse_response(data: Any, hook: str, *, strict: bool = False) -> DecoratorResponse:
    if not isinstance(data, dict):
        raise ResponseError(hook, ["the response must be a JSON object"])
    problems: list[str] = unknown_fields(data, DECORATOR_FIELDS) if strict else []
    response = DecoratorResponse()
    for key in ("labels", "annotations"):
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, dict) or not all(
            isinstance(v, str) or v is None for v in value.values()
        ):
            problems.append(f"{key}: must be a map of strings (null deletes a key)")
            continue
        # refused here, not by the API server: a dry run must not pass what the run fails
        found = map_problems(value, key, labels=key == "labels")
        if found:
            problems += found
            continue
        setattr(response, key, {str(k): v for k, v in value.items()})
    status = data.get("status")
    if status is not None and not isinstance(status, dict):
        problems.append(f"status: must be an object or null, not {type(status).__name__}")
    else:
        response.status = status
    # null or absent: none; anything but a list (false, "", {}) is refused, never read as
    # "no attachments" (which would delete them all)
    response.attachments = object_list(data.get("attachments"), "attachments", problems)
    finalized = data.get("finalized")
    if finalized is not None and not isinstance(finalized, bool):
        problems.append(f"finalized: must be true or false, not {finalized!r}")
    response.finalized = bool(finalized)
    response.resync_after = seconds_field(data, "resyncAfterSeconds", problems)
    if problems:
        raise ResponseError(hook, problems)
    return response
