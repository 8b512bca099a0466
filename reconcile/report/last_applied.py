"""Last-applied annotations in a review: bookkeeping when they record the object, data when
they do not.

`metacontroller.k8s.io/last-applied-configuration` (written by every client-side apply of
reconcile's and Metacontroller's) and `kubectl.kubernetes.io/last-applied-configuration`
(kubectl's) hold a copy of what was applied, as JSON. A review never reads them to say what an
object is: it shows the object. It leaves such an annotation out as noise only when it is a
true record of the object: JSON whose every field the object holds with the same value (the
server adds defaults and metadata of its own; a null may be dropped). Anything else (a
different role, subjects the object does not have, a field the server dropped, not JSON at
all) is an annotation like any other, shown and compared as its text: whatever it claims, the
reviewer sees the object as it is and the claim as a claim."""

from __future__ import annotations

import json
from typing import Any

from reconcile.objects.jsondata import json_equal
from reconcile.objects.meta import SERVER_OWNED_METADATA, Obj
from reconcile.objects.redact import LAST_APPLIED_ANNOTATIONS

_MAX_RECORD = 4 * 1024 * 1024  # characters of JSON read at most (an annotation's limit is 256 KiB)
_MAX_DEPTH = 100


def without_records(obj: Obj) -> Obj:
    """`obj` without the last-applied annotations that record it truly (a shallow copy where it
    changes: `obj` is never changed)."""
    meta = obj.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    if not isinstance(meta, dict) or not isinstance(annotations, dict):
        return obj
    noise = [
        name
        for name in LAST_APPLIED_ANNOTATIONS
        if name in annotations and records(annotations[name], obj)
    ]
    if not noise:
        return obj
    kept = {k: v for k, v in annotations.items() if k not in noise}
    new_meta = {k: v for k, v in meta.items() if k != "annotations"}
    if kept:
        new_meta["annotations"] = kept
    return {**obj, "metadata": new_meta}


def records(text: Any, obj: Obj) -> bool:
    """Whether `text` (an annotation's value) is JSON that `obj` holds all of: what was applied
    to make it, with nothing the object does not have."""
    if not isinstance(text, str) or len(text) > _MAX_RECORD:
        return False
    try:
        recorded = json.loads(text)
    except (ValueError, RecursionError):
        return False
    if not isinstance(recorded, dict) or not recorded.get("kind"):
        return False
    return _within(_comparable(recorded), _comparable(obj), 0)


def _comparable(obj: Obj) -> Obj:
    """What a record and its object are compared on: not status (a record's is not applied),
    not server-owned metadata nor owners' uids (a dump leaves them out), not the last-applied
    annotations themselves."""
    out = {k: v for k, v in obj.items() if k != "status"}
    meta = out.get("metadata")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if k not in SERVER_OWNED_METADATA}
        annotations = meta.get("annotations")
        if isinstance(annotations, dict):
            meta["annotations"] = {
                k: v for k, v in annotations.items() if k not in LAST_APPLIED_ANNOTATIONS
            }
        owners = meta.get("ownerReferences")
        if isinstance(owners, list):
            meta["ownerReferences"] = [
                {k: v for k, v in ref.items() if k != "uid"} if isinstance(ref, dict) else ref
                for ref in owners
            ]
        out["metadata"] = meta
    return out


def _within(claim: Any, actual: Any, depth: int) -> bool:
    if depth > _MAX_DEPTH:
        return False
    if isinstance(claim, dict):
        if not isinstance(actual, dict):
            return False
        for key, value in claim.items():
            if key not in actual:
                if value is None or value == {}:  # the server drops a null and an empty map
                    continue
                return False
            if not _within(value, actual[key], depth + 1):
                return False
        return True
    if isinstance(claim, list):
        if not isinstance(actual, list) or len(claim) != len(actual):
            return False
        return all(_within(c, a, depth + 1) for c, a in zip(claim, actual, strict=True))
    return json_equal(claim, actual)
