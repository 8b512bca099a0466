"""Events on parents: `SyncError` Warnings, and Normal Events for what a run did to a parent's
children, one per parent and kind of change, with the count (a run that changes nothing
records none).

An Event's name is derived from what it says (the object's uid, type, reason and message), as
client-go's recorder keys the Events it aggregates: the same Event again, in this run or a later
one, raises the existing one's `count` and `lastTimestamp` instead of adding another object (a
CronJob every 5 minutes on a parent that keeps failing keeps one Event, not 288 a day)."""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from datetime import UTC, datetime

from reconcile.engine.actions import ActionKind
from reconcile.objects.meta import Obj, identity, metadata, name_of, namespace_of, uid_of
from reconcile.results import ActionResult
from reconcile.secret_values import scrub

_REASONS = {
    ActionKind.CREATE: "Created",
    ActionKind.UPDATE: "Updated",
    ActionKind.DELETE: "Deleted",
}
_NAMES_SHOWN = 5


def change_events(parent: Obj, actions: list[ActionResult]) -> list[tuple[str, str, int]]:
    """(reason, message, count) for the children the run created, updated or deleted."""
    done: dict[str, list[str]] = {}
    for result in actions:
        action = result.action
        reason = _REASONS.get(action.kind)
        if reason is None or not result.applied or result.unchanged:
            continue
        if uid_of(action.target) == uid_of(parent) and action.resource.kind == parent.get("kind"):
            continue  # the parent itself (its finalizer, its status) is not a child
        done.setdefault(reason, []).append(identity(action.target))
    events = []
    for reason, names in done.items():
        kinds = Counter(name.split(" ", 1)[0] for name in names)
        what = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
        shown = ", ".join(names[:_NAMES_SHOWN])
        more = f" and {len(names) - _NAMES_SHOWN} more" if len(names) > _NAMES_SHOWN else ""
        events.append((reason, f"{reason.lower()} {what}: {shown}{more}", len(names)))
    return events


def event(involved: Obj, reason: str, message: str, kind: str = "Warning", count: int = 1) -> Obj:
    now = _now()
    namespace = namespace_of(involved) or "default"
    # text only: a character that is none (a lone surrogate) is shown by its escape
    shown = scrub(message)[:1024].encode("utf-8", "backslashreplace").decode("utf-8")
    key = "\0".join((uid_of(involved), identity(involved), kind, reason, shown))
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name_of(involved)[:200]}.{digest}", "namespace": namespace},
        "involvedObject": {
            k: v
            for k, v in {
                "apiVersion": involved.get("apiVersion"),
                "kind": involved.get("kind"),
                "name": name_of(involved),
                "namespace": namespace_of(involved),
                "uid": uid_of(involved),
                "resourceVersion": metadata(involved).get("resourceVersion"),
            }.items()
            if v
        },
        "reason": reason,
        "message": shown,
        "type": kind,
        "source": {"component": "reconcile"},
        "reportingComponent": "reconcile",
        "reportingInstance": f"reconcile-{int(time.time())}",
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": count,
    }


def repeated(stored: Obj, again: Obj) -> Obj:
    """`stored` (the same Event from before) counting `again` too."""
    bumped = dict(stored)
    bumped["count"] = int(stored.get("count") or 1) + int(again.get("count") or 1)
    bumped["lastTimestamp"] = again.get("lastTimestamp") or _now()
    return bumped


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
