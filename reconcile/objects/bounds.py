"""Bounds on what an input may build once decoded, checked on every input path (a hook's answer,
a manifest, a controller file), per object, with an error naming where.

- Depth: MAX_DEPTH levels of objects and arrays. Real objects stay far below (a Pod ~10, the
  deepest CRD schemas ~40); deeper input would exhaust the recursion of whatever processes it
  later (deep copies, diffs, redaction) and fail the whole run instead of its one input.
- Values: MAX_VALUES scalars, objects and arrays in one JSON document. Bytes are capped
  elsewhere (16 MiB for a hook's answer), but 16 MiB of `{},` decodes to 5.6 million dicts
  (~490 MiB): counted before decoding, the answer is refused without being built. A real answer
  of a few thousand children holds some hundred thousand values.

Pure: no I/O.
"""

from __future__ import annotations

import json
import re
from typing import Any

from reconcile.objects.lazy_pattern import on_first_use

MAX_DEPTH = 100
MAX_VALUES = 500_000

# A JSON string, escapes included: what must be skipped when counting structure. Possessive:
# a string of millions of characters is matched without a backtracking state kept for each
# (1.9 GB for 16 million, otherwise).
_JSON_STRING = on_first_use(rb'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
# Text outside strings and strings holding no mark, as far as they go (possessive: a string
# holding a mark ends the match without any backtracking).
_WITHOUT_MARKS = on_first_use(rb'(?:[^"]++|"(?:[^"\\\[,:]|\\.)*+")*+', re.DOTALL)


class BoundError(ValueError):
    """An input beyond a bound; the message says which and where."""


def value_count_problem(data: bytes | bytearray, limit: int = MAX_VALUES) -> str | None:
    """Whether the JSON text `data` may hold more than `limit` values, found without decoding
    it: every value but the first follows a `[`, `,` or `:`. Counted over the whole text first
    (fast); only a text over the limit is counted again without the marks inside its strings
    (no copy: a substitution would build millions of pieces)."""
    marks = _structure_marks(data)
    if marks < limit or marks - _marks_in_strings(data, marks - limit) < limit:
        return None
    return f"more than {limit} values (objects, arrays and scalars)"


def _marks_in_strings(data: bytes | bytearray, enough: int) -> int:
    """The structure marks inside `data`'s strings, counted until there are more than `enough`.
    The regular expression engine skips text and strings without marks (millions of short
    strings cost no Python step each); only the strings holding marks are counted one by one."""
    inside, position, end = 0, 0, len(data)
    without_marks, json_string = _WITHOUT_MARKS(), _JSON_STRING()
    while True:
        skipped = without_marks.match(data, position)
        position = skipped.end() if skipped else position
        string = json_string.match(data, position) if position < end else None
        if string is None:  # the end (or an unterminated string, which decoding refuses)
            return inside
        inside += _structure_marks(data, string.start(), string.end())
        if inside > enough:
            return inside
        position = string.end()


def _structure_marks(data: bytes | bytearray, start: int = 0, end: int | None = None) -> int:
    stop = len(data) if end is None else end
    return sum(data.count(mark, start, stop) for mark in (b"[", b",", b":"))


def depth_problem_in(
    raw: str | bytes | bytearray, value: Any, limit: int = MAX_DEPTH
) -> str | None:
    """`depth_problem` of `value`, decoded from the JSON text `raw`: a text with at most
    `limit` opening brackets cannot nest deeper (each level opens one), and is not walked."""
    if isinstance(raw, str):
        opens = raw.count("{") + raw.count("[")
    else:
        opens = raw.count(b"{") + raw.count(b"[")
    return None if opens <= limit else depth_problem(value, limit)


def depth_problem(value: Any, limit: int = MAX_DEPTH) -> str | None:
    """Where `value` (decoded JSON or YAML) nests deeper than `limit` objects and arrays, as a
    path (`status.a.a[0]...`); None when it does not. Iterative: deep input cannot exhaust the
    recursion here."""
    if not _deeper_than(value, limit):
        return None
    return _deep_path(value, limit)


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether a container nests deeper than `limit`: level by level, no path kept (a third of
    the cost of the walk that names where)."""
    level = [value] if isinstance(value, (dict, list)) else []
    depth = 0
    while level:
        if depth >= limit:
            return True
        below: list[Any] = []
        for item in level:
            children = item.values() if isinstance(item, dict) else item
            below += [child for child in children if isinstance(child, (dict, list))]
        level, depth = below, depth + 1
    return False


def _deep_path(value: Any, limit: int) -> str | None:
    stack: list[tuple[Any, int, tuple[str, ...]]] = [(value, 0, ())]
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, dict):
            children: Any = ((f".{k}" if path else str(k), v) for k, v in item.items())
        elif isinstance(item, list):
            children = ((f"[{i}]", v) for i, v in enumerate(item))
        else:
            continue
        if depth >= limit:
            return f"nested deeper than {limit} levels (at {_shown(path)})"
        for step, child in children:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1, (*path, step)))
    return None


# How a decoded text comes to hold a lone half of a UTF-16 surrogate pair, which is not a
# character (nothing can print, encode or send it): a JSON `\ud800` or YAML `\U0000DC00`
# escape, the three bytes UTF-8 would give one (ED A0 80 to ED BF BF, which Python's JSON
# reader takes, seen here through Latin-1), or the code unit itself in a text.
_SURROGATE_ESCAPE = re.compile(r"\\(?:u|U0000)[dD][89a-fA-F]|\xed[\xa0-\xbf]|[\ud800-\udfff]")


def surrogate_problem(raw: str | bytes | bytearray, value: Any) -> str | None:
    """Where decoded `value` holds a lone surrogate (in a key or a string), as "a lone UTF-16
    surrogate (\\ud800) at metadata.name"; None when it holds none. `raw` is what it was
    decoded from (text, or UTF-8 bytes): text without an escape or the bytes of one is not
    walked."""
    text = raw if isinstance(raw, str) else bytes(raw).decode("latin-1")
    if not _SURROGATE_ESCAPE.search(text):
        return None
    stack: list[tuple[Any, tuple[str, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            found = next((c for c in item if "\ud800" <= c <= "\udfff"), None)
            if found is not None:
                return f"a lone UTF-16 surrogate (\\u{ord(found):04x}) at {_shown(path)}"
        elif isinstance(item, dict):
            for key, child in item.items():
                step = f".{key}" if path else str(key)
                stack.append((key if isinstance(key, str) else "", (*path, step)))
                stack.append((child, (*path, step)))
        elif isinstance(item, list):
            stack.extend((child, (*path, f"[{i}]")) for i, child in enumerate(item))
    return None


def _shown(path: tuple[str, ...]) -> str:
    if len(path) <= 8:
        shown = "".join(path) or "the top"
    else:
        shown = "".join(path[:6]) + "..." + "".join(path[-2:])
    # a key may be the lone surrogate found: named by its escape, never carried into a message
    return shown.encode("utf-8", "backslashreplace").decode("utf-8")


def _once_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are each given once (ValueError otherwise: a reader would take
    the first for what counts, where the last would)."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"the key {key!r} is given twice in one object")
        found[key] = value
    return found


def loads_bounded(data: bytes | str, parse_constant: Any = None) -> Any:
    """`json.loads` within the bounds: BoundError (a ValueError) beyond them."""
    raw = data.encode() if isinstance(data, str) else data
    problem = value_count_problem(raw)
    if problem is not None:
        raise BoundError(problem)
    try:
        value = json.loads(raw, parse_constant=parse_constant, object_pairs_hook=_once_each)
    except RecursionError:
        raise BoundError(f"nested deeper than {MAX_DEPTH} levels") from None
    problem = depth_problem_in(raw, value) or surrogate_problem(raw, value)
    if problem is not None:
        raise BoundError(problem if "surrogate" not in problem else f"holds {problem}")
    return value
