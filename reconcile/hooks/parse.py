"""Turning a hook's output into a response object."""

from __future__ import annotations

import json
from typing import Any

from reconcile.api.hooks import HookSpec
from reconcile.hooks.errors import HookError, head_excerpt, one_line


def parse_object(hook: HookSpec, data: bytes, what: str) -> dict[str, Any]:
    """`data` as a JSON object, or HookError 'bad-json' / 'not-an-object'. `what` names the
    output in messages ("response body", "stdout")."""
    try:
        value = json.loads(data)
    except (ValueError, RecursionError) as exc:
        excerpt = head_excerpt(data)
        detail = f"{what} is not valid JSON ({_json_problem(exc)})"
        if excerpt:
            detail += f": {one_line(excerpt)}"
        else:
            detail += " (empty)"
        raise HookError(hook, "bad-json", detail, excerpt=excerpt) from None
    if not isinstance(value, dict):
        raise HookError(
            hook,
            "not-an-object",
            f"{what} is a JSON {_json_type(value)}, not an object",
            excerpt=head_excerpt(data),
        )
    return value


def _json_problem(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc)


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"
