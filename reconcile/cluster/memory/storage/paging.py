"""Paginated LISTs: `continue` tokens in the API server's shape (URL-safe base64 of
`{"v": "meta.k8s.io/v1", "rv": <list resourceVersion>, "start": <next key>}`), and the
snapshots a token continues from, so that every page of one list comes from the same data."""

from __future__ import annotations

import base64
import binascii
import json
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable

from reconcile.cluster.errors import BadRequest
from reconcile.cluster.memory.storage.store import ObjectStore
from reconcile.cluster.types import Obj
from reconcile.records import dataclass

_TOKEN_VERSION = "meta.k8s.io/v1"
_SNAPSHOTS_KEPT = 32

# (group_resource, namespace or None, label selector, field selector, list resourceVersion)
SnapshotKey = tuple[str, str | None, str, str, int]
KeyedObjects = list[tuple[str, Obj]]


def encode_continue(resource_version: int, last_key: str) -> str:
    """The token that resumes a list after `last_key` at `resource_version`."""
    payload = {"v": _TOKEN_VERSION, "rv": resource_version, "start": last_key + "\x00"}
    raw = json.dumps(payload, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    """(resourceVersion, first key to return) from a token; BadRequest when malformed."""
    try:
        padded = token + "=" * (-len(token) % 4)
        payload = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
    except (ValueError, binascii.Error, UnicodeDecodeError) as e:
        raise BadRequest(f"continue key is not valid: {e}") from e
    if not isinstance(payload, dict) or payload.get("v") != _TOKEN_VERSION:
        raise BadRequest("continue key is not valid: incorrect encoded start resourceVersion")
    rv, start = payload.get("rv"), payload.get("start")
    if not isinstance(rv, int) or isinstance(rv, bool) or rv <= 0:
        raise BadRequest("continue key is not valid: incorrect encoded start resourceVersion")
    if not isinstance(start, str) or not start:
        raise BadRequest("continue key is not valid: encoded start key is empty")
    if start.startswith("/") or ".." in start.split("/"):
        raise BadRequest("continue key is not valid: start key may not contain a relative path")
    return rv, start


@dataclass(frozen=True)
class Page:
    """One page of a list: its objects (as stored), the token to the next page ("" when this
    is the last) and how many objects are left after it."""

    objects: list[Obj]
    resource_version: int
    continue_token: str
    left: int


class ListPages:
    """The lists the store answers page by page. A first page lists the store's current data; a
    `continue` token carries on through the objects that matched when its list began (the last
    32 lists with pages to read are kept; a token whose snapshot is gone continues from the
    current data instead of failing with 410 Gone)."""

    def __init__(self) -> None:
        self._snapshots: OrderedDict[SnapshotKey, KeyedObjects] = OrderedDict()

    def page(
        self,
        store: ObjectStore,
        stored_as: str,
        key: tuple[str, str | None, str, str],
        matches: Callable[[Obj], bool],
        *,
        limit: int | None,
        continue_token: str | None,
    ) -> Page:
        """`stored_as`: the group_resource the objects are stored under; `key`: the one asked
        for, the namespace (None: all), and the label and field selectors as given; `matches`:
        whether an object is selected."""
        scope = key[1]
        if continue_token:
            list_rv, start = decode_continue(continue_token)
        else:
            list_rv, start = store.resource_version, ""
        snapshot_key: SnapshotKey = (*key, list_rv)
        matching = self._snapshots.get(snapshot_key) if continue_token else None
        if matching is None:
            matching = [(k, obj) for k, obj in store.items(stored_as, scope) if matches(obj)]
        remaining = matching[bisect_left(matching, start, key=lambda item: item[0]) :]
        page = remaining[:limit] if limit is not None and limit > 0 else remaining
        left = len(remaining) - len(page)
        token = ""
        if left:
            token = encode_continue(list_rv, page[-1][0])
            self._snapshots[snapshot_key] = matching
            self._snapshots.move_to_end(snapshot_key)
            while len(self._snapshots) > _SNAPSHOTS_KEPT:
                self._snapshots.popitem(last=False)
        return Page([obj for _, obj in page], list_rv, token, left)
