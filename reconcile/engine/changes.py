"""The fields an update changes, leaf by leaf: what the loop guard compares between passes and
what it reports ("the server keeps `500m` where the hook returns `0.5`")."""

from __future__ import annotations

import json
from typing import Any

from reconcile.objects.meta import SERVER_OWNED_METADATA
from reconcile.objects.secrets import is_secret
from reconcile.records import dataclass

_ABSENT = object()
HIDDEN = "(hidden: a Secret value)"


@dataclass(frozen=True)
class FieldChange:
    path: str  # `spec.containers[0].resources.requests.cpu`
    wanted: Any  # what the hook returns (None: the field is left out)
    kept: Any  # what the cluster has (None: absent)

    def describe(self) -> str:
        kept, wanted = _show(self.kept), _show(self.wanted)
        return f"{self.path}: the cluster keeps {kept} where the hook returns {wanted}"


def field_changes(
    wanted: dict[str, Any],
    kept: dict[str, Any],
    *,
    status: bool = False,
    with_status: bool = False,
) -> list[FieldChange]:
    """The leaves where `wanted` (the object sent) and `kept` (the object in the cluster)
    differ, within `status` for a status update and outside it otherwise; `with_status`: the
    status too (an update of an object without the status subresource writes its status).
    Secret values are hidden."""
    changes: list[FieldChange] = []
    if status:
        _walk(wanted.get("status", _ABSENT), kept.get("status", _ABSENT), "status", changes)
    else:
        for key in sorted(set(wanted) | set(kept)):
            if key in ("apiVersion", "kind") or (key == "status" and not with_status):
                continue
            if key == "metadata":
                _walk(_meta(wanted), _meta(kept), "metadata", changes)
            else:
                _walk(wanted.get(key, _ABSENT), kept.get(key, _ABSENT), key, changes)
    if is_secret(wanted) or is_secret(kept):
        changes = [
            FieldChange(c.path, HIDDEN, HIDDEN)
            if c.path.split(".")[0] in ("data", "stringData")
            else c
            for c in changes
        ]
    return changes


def fingerprint(changes: list[FieldChange]) -> str:
    return json.dumps([(c.path, c.wanted, c.kept) for c in changes], sort_keys=True, default=str)


def _meta(obj: dict[str, Any]) -> Any:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return _ABSENT
    return {k: v for k, v in meta.items() if k not in SERVER_OWNED_METADATA}


def _walk(wanted: Any, kept: Any, path: str, out: list[FieldChange]) -> None:
    if wanted == kept:
        return
    if isinstance(wanted, dict) and isinstance(kept, dict):
        for key in sorted(set(wanted) | set(kept)):
            _walk(wanted.get(key, _ABSENT), kept.get(key, _ABSENT), f"{path}.{key}", out)
        return
    if isinstance(wanted, list) and isinstance(kept, list) and len(wanted) == len(kept):
        for index, (left, right) in enumerate(zip(wanted, kept, strict=True)):
            _walk(left, right, f"{path}[{index}]", out)
        return
    out.append(
        FieldChange(path, None if wanted is _ABSENT else wanted, None if kept is _ABSENT else kept)
    )


def _show(value: Any) -> str:
    if value is None:
        return "nothing"
    if value == HIDDEN:
        return HIDDEN
    text = json.dumps(value, sort_keys=True, default=str)
    return f"`{text if len(text) <= 200 else text[:200] + '...'}`"
