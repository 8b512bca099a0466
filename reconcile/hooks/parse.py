"""Turning a hook's output into a response object."""

from __future__ import annotations

import json
import re
from typing import Any

from reconcile.hooks.errors import HookError, head_excerpt, one_line
from reconcile.objects.bounds import depth_problem_in, surrogate_problem, value_count_problem
from reconcile.objects.secrets import text_may_hold_secret
from reconcile.secret_values import knows_secret_in, remember_secrets
from reconcile.specs.hooks import HookSpec

#: How many starts of a JSON object a broken output is searched for, to learn its Secrets.
_SALVAGE_TRIES = 20


def parse_object(hook: HookSpec, data: bytes | bytearray, what: str) -> dict[str, Any]:
    """`data` as a JSON object, or HookError 'bad-json' / 'not-an-object'. `what` names the
    output in messages ("response body", "stdout"). Read as `json.loads` reads bytes (UTF-8,
    UTF-16 or UTF-32); every check reads the same text as UTF-8. Bounded (objects/bounds.py):
    an answer that would build too much is refused before it is decoded ('too-large'), one
    nested too deep after ('too-deep')."""
    text, utf8, not_text = _decoded(data)
    too_many = value_count_problem(utf8)
    if too_many is not None:
        raise HookError(hook, "too-large", f"{what} holds {too_many}; not decoded")
    try:
        if not_text is not None:
            raise not_text
        value = (_STRICT_DECODER if hook.strict else _DECODER).decode(text)
    except RepeatedField as exc:
        remember_secrets_in(utf8)
        raise HookError(
            hook, "repeated-field", f"{what}: {exc} (a strict hook answers each field once)"
        ) from None
    except (ValueError, RecursionError) as exc:
        remember_secrets_in(utf8)
        problem = _json_problem(exc)
        excerpt = quotable_excerpt(data, text)
        if excerpt:
            detail = f"{what} is not valid JSON ({problem}): {one_line(excerpt)}"
        elif data.strip():
            detail = (
                f"{what} is not valid JSON ({problem}) (not quoted: it may hold a Secret's value)"
            )
        else:
            detail = f"{what} is not valid JSON ({problem}) (empty)"
        raise HookError(hook, "bad-json", detail, excerpt=excerpt) from None
    if text_may_hold_secret(utf8):  # any value: an array's Secrets are not quoted either
        remember_secrets(value)
    if not isinstance(value, dict):
        excerpt = quotable_excerpt(data, text)
        raise HookError(
            hook,
            "not-an-object",
            f"{what} is a JSON {_json_type(value)}, not an object"
            + ("" if excerpt else " (not quoted: it may hold a Secret's value)"),
            excerpt=excerpt,
        )
    too_deep = depth_problem_in(utf8, value)
    if too_deep is not None:
        raise HookError(hook, "too-deep", f"{what} is {too_deep}")
    surrogate = surrogate_problem(utf8, value)
    if surrogate is not None:
        raise HookError(hook, "bad-json", f"{what} holds {surrogate}, which is not text")
    return value


def _decoded(data: bytes | bytearray) -> tuple[str, bytes | bytearray, UnicodeDecodeError | None]:
    """The text `json.loads` would read from `data`, the same text as UTF-8 (`data` itself when
    it is UTF-8 already), and the error when it is no text in its encoding (then the text is
    what could be read, for the checks and the excerpt)."""
    encoding = json.detect_encoding(data)
    try:
        text = data.decode(encoding, "surrogatepass")
    except UnicodeDecodeError as exc:
        text = data.decode(encoding, "replace")
        return text, text.encode("utf-8", "surrogatepass"), exc
    if encoding == "utf-8":
        return text, data, None
    return text, text.encode("utf-8", "surrogatepass"), None


#: A JSON escape: `\\/`, `\\n`, `\\u00e9`.
_JSON_ESCAPE = re.compile(r'\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))')
_ESCAPED = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def quotable_excerpt(data: bytes | bytearray, text: str) -> str:
    """The start of output (`data`, read as `text`) for an error that quotes it, its JSON
    escapes read; "" when it may hold a Secret's value, which a quote would show however it
    is disguised: when `Secret`, or a value the run knows, is in the text, in the bytes as
    they are, or in the bytes without their NULs (UTF-16 or UTF-32 read as another
    encoding), each with its escapes read (`\\/`, `\\u0053`). In output that is not a
    JSON object a Secret's values cannot be found, and a copy of one is quoted as it is."""
    raw = bytes(data)
    views = (
        text,
        raw.decode("utf-8", "replace"),
        raw.replace(b"\0", b"").decode("utf-8", "replace"),
    )
    read = [_unescaped(view) for view in views]
    if any("Secret" in view or knows_secret_in(view) for view in read):
        return ""
    return head_excerpt(read[0].encode("utf-8", "backslashreplace"))


def _unescaped(text: str) -> str:
    """`text` with JSON's escapes read (a lone surrogate's escape kept as it is)."""

    def one(found: re.Match[str]) -> str:
        code, letter = found.groups()
        if code is None:
            return _ESCAPED.get(letter, letter)
        char = chr(int(code, 16))
        return found.group(0) if "\ud800" <= char <= "\udfff" else char

    return _JSON_ESCAPE.sub(one, text)


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
    line, and remember their Secrets so that the excerpt is scrubbed wherever it goes. Read
    in the encoding JSON's reader would find (UTF-8, -16 or -32)."""
    text = data.decode(json.detect_encoding(data), errors="replace")
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
        return f"not {exc.encoding.upper()}"
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
