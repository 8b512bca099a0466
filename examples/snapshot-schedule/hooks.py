"""snapshot-schedule: the MapController design's own example.

map:       for one PVC, the VolumeSnapshots it should have: the ones still inside their TTL,
           and one for the current interval when it has none yet.
tombstone: for the snapshots of a PVC that is gone, the ones to keep (still inside their TTL).

"Now" is read once per request: from the schedule's annotation `snapshot.example.com/now` (an
RFC 3339 time, e.g. 2026-01-01T06:00:00Z) when it has one, else from SNAPSHOT_SCHEDULE_NOW in
the hook's environment, else the clock. Pin it to test a schedule, or to see what it would do
at a given time with `reconcile --dry-run`. A snapshot's time is the
start of its interval, kept in its `snapshot.example.com/taken-at` annotation; names are
`<pvc>-<yyyymmdd-hhmm>` of that time, so that a run repeated within an interval changes nothing.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from hooklib import run  # hooklib.py beside this file

SNAPSHOTS = "VolumeSnapshot.snapshot.storage.k8s.io/v1"
TAKEN_AT = "snapshot.example.com/taken-at"
NOW = "snapshot.example.com/now"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def duration(text: str) -> timedelta:
    """`90s`, `30m`, `6h`, `10d`, `1w`, or combined (`1d12h`)."""
    parts = re.findall(r"(\d+)([smhdw])", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"{text!r} is not a duration like 30m, 6h or 10d")
    return timedelta(seconds=sum(int(n) * _UNITS[u] for n, u in parts))


def now(schedule: dict[str, Any]) -> datetime:
    annotations = schedule.get("metadata", {}).get("annotations") or {}
    pinned = annotations.get(NOW) or os.environ.get("SNAPSHOT_SCHEDULE_NOW")
    if pinned:
        return datetime.fromisoformat(pinned.replace("Z", "+00:00")).astimezone(UTC)
    return datetime.now(UTC)


def stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def taken_at(snapshot: dict[str, Any]) -> datetime | None:
    text = (snapshot.get("metadata", {}).get("annotations") or {}).get(TAKEN_AT)
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def snapshot(pvc: str, when: datetime, class_name: str | None) -> dict[str, Any]:
    """A snapshot as this controller writes it (the same each time: no change, no write)."""
    spec: dict[str, Any] = {"source": {"persistentVolumeClaimName": pvc}}
    if class_name:
        spec["volumeSnapshotClassName"] = class_name
    return {
        "apiVersion": "snapshot.storage.k8s.io/v1",
        "kind": "VolumeSnapshot",
        "metadata": {
            "name": f"{pvc}-{when:%Y%m%d-%H%M}",
            "annotations": {TAKEN_AT: stamp(when)},
        },
        "spec": spec,
    }


def alive(snap: dict[str, Any], ttl: timedelta, at: datetime) -> bool:
    taken = taken_at(snap)
    return taken is not None and taken + ttl > at


def map_hook(request: dict[str, Any]) -> dict[str, Any]:
    spec = request["parent"].get("spec", {})
    interval, ttl = duration(spec["snapshotInterval"]), duration(spec["snapshotTTL"])
    pvc = request["input"]["metadata"]["name"]
    class_name = spec.get("volumeSnapshotClassName")
    at = now(request["parent"])
    epoch = int(at.timestamp())
    step = int(interval.total_seconds())
    slot = datetime.fromtimestamp(epoch - epoch % step, UTC)
    observed = request["outputs"].get(SNAPSHOTS, {}).values()
    outputs = []
    covered = False
    for snap in observed:
        taken = taken_at(snap)
        if taken is None or not alive(snap, ttl, at):
            continue  # expired: not returned, so it is deleted
        covered = covered or taken >= slot
        outputs.append(snapshot(pvc, taken, class_name))
    if not covered:
        outputs.append(snapshot(pvc, slot, class_name))
    return {"outputs": outputs}


def tombstone_hook(request: dict[str, Any]) -> dict[str, Any]:
    ttl = duration(request["parent"].get("spec", {})["snapshotTTL"])
    at = now(request["parent"])
    kept = [
        {"apiVersion": s["apiVersion"], "kind": s["kind"], "metadata": {"name": name}}
        for name, s in request["outputs"].get(SNAPSHOTS, {}).items()
        if alive(s, ttl, at)
    ]
    return {"outputs": kept}


if __name__ == "__main__":
    run({"map": map_hook, "tombstone": tombstone_hook})
