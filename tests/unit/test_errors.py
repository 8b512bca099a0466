from __future__ import annotations

import json

import pytest

from reconcile.cluster.errors import (
    AlreadyExists,
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    NotFound,
    TooManyRequests,
    Unauthorized,
    Unavailable,
    error_from_status,
)


def status_body(code: int, reason: str, message: str = "m", **details: object) -> bytes:
    return json.dumps(
        {"kind": "Status", "code": code, "reason": reason, "message": message, "details": details}
    ).encode()


@pytest.mark.parametrize(
    ("code", "reason", "expected"),
    [
        (400, "BadRequest", BadRequest),
        (401, "Unauthorized", Unauthorized),
        (403, "Forbidden", Forbidden),
        (404, "NotFound", NotFound),
        (409, "AlreadyExists", AlreadyExists),
        (409, "Conflict", Conflict),
        (410, "Expired", Gone),
        (422, "Invalid", Invalid),
        (429, "TooManyRequests", TooManyRequests),
        (500, "InternalError", Unavailable),
        (503, "ServiceUnavailable", Unavailable),
        (504, "Timeout", Unavailable),
        (418, "Teapot", ApiError),
    ],
)
def test_status_codes_map_to_types(code: int, reason: str, expected: type[ApiError]) -> None:
    error = error_from_status(code, status_body(code, reason, "the message"))
    assert type(error) is expected
    assert error.status == code and error.reason == reason and error.message == "the message"


def test_retry_after_from_header_or_details() -> None:
    assert error_from_status(429, status_body(429, "TooManyRequests"), "3").retry_after == 3.0
    in_details = error_from_status(429, status_body(429, "TooManyRequests", retryAfterSeconds=2))
    assert in_details.retry_after == 2.0
    assert error_from_status(429, b"", "Wed, 21 Oct 2015 07:28:00 GMT").retry_after is None


def test_a_non_status_body_becomes_the_message() -> None:
    error = error_from_status(502, b"<html>bad gateway</html>")
    assert isinstance(error, Unavailable)
    assert "bad gateway" in error.message
