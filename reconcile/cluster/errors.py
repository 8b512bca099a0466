"""The API error hierarchy. Status codes map to types in one place: `error_from_status`."""

from __future__ import annotations

import json
from typing import Any


class ApiError(Exception):
    """An error answered by the API server (or the in-process cluster).

    `status` is the HTTP code, `reason` the `Status.reason` (e.g. `AlreadyExists`), `message` the
    server's message; `retry_after` is set when the server asked to wait (seconds).
    """

    status: int = 0
    default_reason: str = "Unknown"

    def __init__(
        self,
        message: str,
        *,
        reason: str | None = None,
        status: int | None = None,
        details: dict[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason or self.default_reason
        if status is not None:
            self.status = status
        self.details = details or {}
        self.retry_after = retry_after

    def __str__(self) -> str:
        return f"{self.reason} ({self.status}): {self.message}"


class BadRequest(ApiError):
    status = 400
    default_reason = "BadRequest"


class Unauthorized(ApiError):
    status = 401
    default_reason = "Unauthorized"


class Forbidden(ApiError):
    status = 403
    default_reason = "Forbidden"


class NotFound(ApiError):
    status = 404
    default_reason = "NotFound"


class MethodNotAllowed(ApiError):
    status = 405
    default_reason = "MethodNotAllowed"


class Conflict(ApiError):
    """409: a stale resourceVersion, a failed uid precondition, or an object being deleted."""

    status = 409
    default_reason = "Conflict"


class FieldConflict(Conflict):
    """409 to a server-side apply: fields another manager owns hold other values. Not
    transient: it stays until the other manager lets go or the apply forces it."""

    default_reason = "Conflict"


class AlreadyExists(Conflict):
    status = 409
    default_reason = "AlreadyExists"


class Gone(ApiError):
    """410: e.g. an expired `continue` token."""

    status = 410
    default_reason = "Expired"


class Invalid(ApiError):
    status = 422
    default_reason = "Invalid"


class TooManyRequests(ApiError):
    status = 429
    default_reason = "TooManyRequests"


class Unavailable(ApiError):
    """5xx, or the server could not be reached at all (status 0)."""

    status = 503
    default_reason = "ServiceUnavailable"


def is_transient(error: BaseException | None) -> bool:
    """Whether the same request may well succeed a moment later: no answer (status 0), a
    conflict (a stale resourceVersion: the next pass reads afresh), throttling, a server error."""
    if not isinstance(error, ApiError) or isinstance(error, FieldConflict):
        return False
    return error.status in (0, 409, 429) or error.status >= 500


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    405: MethodNotAllowed,
    409: Conflict,
    410: Gone,
    422: Invalid,
    429: TooManyRequests,
}


def _field_manager_conflict(details: dict[str, Any] | None) -> bool:
    causes = (details or {}).get("causes")
    return isinstance(causes, list) and any(
        isinstance(c, dict) and c.get("reason") == "FieldManagerConflict" for c in causes
    )


def _parse_retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # HTTP-date form: the API server never sends it; fall back to backoff


def error_from_status(
    status: int, body: bytes | str | None, retry_after_header: str | None = None
) -> ApiError:
    """Turn an HTTP status and body (ideally a `metav1.Status`) into a typed error."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else (body or "")
    parsed: dict[str, Any] = {}
    try:
        loaded = json.loads(text) if text else {}
        if isinstance(loaded, dict):
            parsed = loaded
    except ValueError:
        pass
    message = str(parsed.get("message") or text[:500] or f"HTTP {status}")
    reason = parsed.get("reason") or None
    details = parsed.get("details") if isinstance(parsed.get("details"), dict) else None
    retry_after = _parse_retry_after(retry_after_header)
    if retry_after is None and details and "retryAfterSeconds" in details:
        retry_after = float(details["retryAfterSeconds"])
    cls: type[ApiError]
    if status == 409 and reason == "AlreadyExists":
        cls = AlreadyExists
    elif status == 409 and _field_manager_conflict(details):
        cls = FieldConflict
    elif status >= 500 or status == 0:
        cls = Unavailable
    else:
        cls = _BY_STATUS.get(status, ApiError)
    return cls(message, reason=reason, status=status, details=details, retry_after=retry_after)
