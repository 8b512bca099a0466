"""The API server's size limits, checked before sending so that each refusal names the object.

A child's whole desired state is copied into its last-applied annotation (client-side apply),
and the API server refuses annotations over 256 KiB in total; any request body over 3 MiB is
refused outright.
"""

from __future__ import annotations

import json
from typing import Any

#: kube-apiserver's limit on the total size of an object's annotations (TotalAnnotationSizeLimitB).
ANNOTATIONS_LIMIT = 256 * 1024
#: kube-apiserver's limit on a request body.
REQUEST_LIMIT = 3 * 1024 * 1024


def encoded_size(value: Any) -> int:
    return len(_COMPACT_UTF8.encode(value).encode())


# made once: json.dumps with options makes an encoder per call
_COMPACT_UTF8 = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def child_size_problem(child: Any, *, annotated: bool = True) -> str | None:
    """Why the API server would refuse this desired child for its size, or None.
    `annotated`: the child carries a last-applied copy of itself (client-side apply)."""
    size = encoded_size(child)
    if size > REQUEST_LIMIT:
        return f"is {_kib(size)} as JSON, over the API server's 3 MiB limit on a request"
    if annotated and size > ANNOTATIONS_LIMIT:
        return (
            f"is {_kib(size)} as JSON: its last-applied annotation (a copy of it) would be over "
            "the API server's 256 KiB limit on annotations; keep large data out of the child"
        )
    return None


def status_size_problem(parent_with_status: Any) -> str | None:
    size = encoded_size(parent_with_status)
    if size > REQUEST_LIMIT:
        return (
            f"status: the parent with this status is {_kib(size)} as JSON, over the API "
            "server's 3 MiB limit on a request"
        )
    return None


def _kib(size: int) -> str:
    return f"{size / 1024:,.0f} KiB"
