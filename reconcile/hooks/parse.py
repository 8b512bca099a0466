"""Turning a hook's output into a response object."""

from __future__ import annotations

import json
from typing import Any

from reconcile.hooks.errors import HookError, head_excerpt, one_line
from reconcile.objects.bounds import depth_problem_in, surrogate_problem, value_count_problem
from reconcile.objects.secrets import text_may_hold_secret
from reconcile.secret_values import remember_secrets
from reconcile.specs.hooks import HookSpec

#: How many starts of a JSON object a broken output is searched for, to learn its Secrets.
_SALVAGE_TRIES = 20


def parse_object(hook: HookSpec, data: bytes | bytearray, what: str) -> dict[str, Any]:
    """`data` as a JSON object, or HookError 'bad-json' / 'not-an-object'. `what` names the
    output in messages ("response body", "stdout"). Bounded (objects/bounds.py): an answer
    that would build too much is refused before it is decoded ('too-large'), one nested too
    deep after ('too-deep')."""
    too_many = value_count_problem(data)
    if too_many is not None:
        raise HookError(hook, "too-large", f"{what} holds {too_many}; not decoded")
    try:
        # as json.loads reads bytes (UTF-8, -16 or -32), with a decoder made once
        text = data.decode(json.detect_encoding(data), "surrogatepass")
        value = (_STRICT_DECODER if hook.strict else _DECODER).decode(text)
    except RepeatedField as exc:
        remember_secrets_in(data)
        raise HookError(
            hook, "repeated-field", f"{what}: {exc} (a strict hook answers each field once)"
        ) from None
    except (ValueError, RecursionError) as exc:
        remember_secrets_in(data)
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
    if text_may_hold_secret(data):
        remember_secrets(value)
    too_deep = depth_problem_in(data, value)
    if too_deep is not None:
        raise HookError(hook, "too-deep", f"{what} is {too_deep}")
    not_text = surrogate_problem(data, value)
    if not_text is not None:
        raise HookError(hook, "bad-json", f"{what} holds {not_text}, which is not text")
    return value


class RepeatedField(ValueError):
    """A field given twice in one JSON object: refused in a strict answer (Go's strict decoding
    refuses it; a loose one keeps the last)."""


def _no_repeated_fields(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise RepeatedField(f"field {key!r} appears twice in one object")
        seen[key] = value
    return seen


def _not_json(name: str) -> Any:
    """NaN and Infinity: Python reads them, JSON (and the API server) does not."""
    raise ValueError(f"{name} is not a JSON number")


_DECODER = json.JSONDecoder(parse_constant=_not_json)
_STRICT_DECODER = json.JSONDecoder(parse_constant=_not_json, object_pairs_hook=_no_repeated_fields)


def remember_secrets_in(data: bytes | bytearray) -> None:
    """Output that is almost JSON (a response, then a debug line) still carries its Secrets'
    values into the error's excerpt: decode the JSON objects it starts with, or that start a
    line, and remember their Secrets so that the excerpt is scrubbed wherever it goes."""
    text = data.decode("utf-8", errors="replace")
    decoder = json.JSONDecoder()
    starts = [i for i, c in enumerate(text) if c == "{" and (i == 0 or text[i - 1] == "\n")]
    if text.lstrip().startswith("{"):
        starts.insert(0, text.index("{"))
    for start in starts[:_SALVAGE_TRIES]:
        try:
            value, _ = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        remember_secrets(value)


def _json_problem(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8"
    if isinstance(exc, RecursionError):
        return "nested too deeply"  # far deeper than MAX_DEPTH: the decoder itself gave up
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
