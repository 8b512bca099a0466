"""`continue` tokens for paginated LISTs, in the API server's shape: URL-safe base64 of
`{"v": "meta.k8s.io/v1", "rv": <list resourceVersion>, "start": <next key>}`."""

from __future__ import annotations

import base64
import binascii
import json

from reconcile.cluster.errors import BadRequest

_TOKEN_VERSION = "meta.k8s.io/v1"


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
