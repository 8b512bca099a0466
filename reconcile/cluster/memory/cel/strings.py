"""cel-go's string extensions (ext.Strings) as kube-apiserver's CEL environment has them:
`charAt`, `indexOf`, `lastIndexOf`, `lowerAscii`, `upperAscii`, `replace`, `split`,
`substring`, `trim`, `join`, `strings.quote` and `format`, with cel-go's errors and Go's
printing of what `format` prints."""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable
from typing import Any

from celpy import celtypes

from reconcile.cluster.memory.cel.errors import CelError
from reconcile.cluster.memory.cel.runtime import (
    Namespace,
    check_produced,
    int_arg,
    is_number,
    string_arg,
)


def char_at(text: Any, index: Any) -> celtypes.StringType:
    text, i = string_arg(text), int_arg(index)
    if i < 0 or i > len(text):
        raise CelError(f"index out of range: {i}")
    return celtypes.StringType(text[i : i + 1])


def string_index_of(target: Any, item: Any, *start: Any) -> celtypes.IntType:
    text, sub = string_arg(target), string_arg(item)
    offset = int_arg(start[0]) if start else 0
    if offset < 0 or offset > len(text):
        raise CelError(f"index out of range: {offset}")
    return celtypes.IntType(text.find(sub, offset))


def string_last_index_of(target: Any, item: Any, *start: Any) -> celtypes.IntType:
    text, sub = string_arg(target), string_arg(item)
    offset = int_arg(start[0]) if start else len(text)
    if offset < 0 or offset > len(text):
        raise CelError(f"index out of range: {offset}")
    return celtypes.IntType(text.rfind(sub, 0, offset + len(sub)))


def ascii_case(convert: Callable[[str], str]) -> Callable[[Any], celtypes.StringType]:
    def change(text: Any) -> celtypes.StringType:
        value = string_arg(text)
        return celtypes.StringType("".join(convert(c) if c.isascii() else c for c in value))

    return change


def replace(text: Any, old: Any, new: Any, *limit: Any) -> celtypes.StringType:
    count = int_arg(limit[0]) if limit else -1
    value, before, after = string_arg(text), string_arg(old), string_arg(new)
    found = value.count(before) if before else len(value) + 1
    if count >= 0:
        found = min(found, count)
    check_produced(len(value) + found * (len(after) - len(before)))  # before it is built
    return celtypes.StringType(value.replace(before, after, count if count >= 0 else -1))


def split(text: Any, separator: Any, *limit: Any) -> celtypes.ListType:
    value, sep = string_arg(text), string_arg(separator)
    count = int_arg(limit[0]) if limit else -1
    if count == 0:
        return celtypes.ListType()
    if sep == "":
        parts = list(value)
        if count > 0 and len(parts) > count:
            parts = [*parts[: count - 1], "".join(parts[count - 1 :])]
    else:
        parts = value.split(sep, count - 1 if count > 0 else -1)
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def substring(text: Any, start: Any, *end: Any) -> celtypes.StringType:
    value = string_arg(text)
    begin = int_arg(start)
    finish = int_arg(end[0]) if end else len(value)
    if begin < 0 or begin > len(value):
        raise CelError(f"index out of range: {begin}")
    if finish < 0 or finish > len(value):
        raise CelError(f"index out of range: {finish}")
    if begin > finish:
        raise CelError(f"invalid substring range. start: {begin}, end: {finish}")
    return celtypes.StringType(value[begin:finish])


def _is_space(character: str) -> bool:
    # Go's unicode.IsSpace: zero-width spaces are not whitespace
    return character.isspace() or unicodedata.category(character) == "Zs"


def trim(text: Any) -> celtypes.StringType:
    value = string_arg(text)
    start, end = 0, len(value)
    while start < end and _is_space(value[start]):
        start += 1
    while end > start and _is_space(value[end - 1]):
        end -= 1
    return celtypes.StringType(value[start:end])


def join(items: Any, *separator: Any) -> celtypes.StringType:
    if not isinstance(items, list):
        raise TypeError("no such overload")
    sep = string_arg(separator[0]) if separator else ""
    return celtypes.StringType(sep.join(string_arg(item) for item in items))


def quote(text: str) -> str:
    escapes = {
        "\a": "\\a",
        "\b": "\\b",
        "\f": "\\f",
        "\n": "\\n",
        "\r": "\\r",
        "\t": "\\t",
        "\v": "\\v",
        "\\": "\\\\",
        '"': '\\"',
    }
    return '"' + "".join(escapes.get(c, c) for c in text) + '"'


def strings_quote(receiver: Any, text: Any) -> celtypes.StringType:
    if not (isinstance(receiver, Namespace) and receiver.name == "strings"):
        raise TypeError("no such overload")
    return celtypes.StringType(quote(string_arg(text)))


def _format_value(clause: str, precision: int | None, value: Any) -> str:
    if clause == "s":
        return _as_string(value)
    if clause == "d":
        if not is_number(value) or isinstance(value, celtypes.DoubleType):
            raise CelError("error during formatting: decimal clause can only be used on integers")
        return str(int(value))
    if clause in "fe":
        if not is_number(value):
            raise CelError(
                "error during formatting: fixed-point clause can only be used on doubles"
                if clause == "f"
                else "error during formatting: scientific clause can only be used on doubles"
            )
        digits = 6 if precision is None else precision
        if _too_large_for_go(digits):  # Go's fmt reads no such precision: what it prints
            return f"%!(NOVERB)%!(EXTRA float64={double_text(float(value))})"
        if clause == "f":
            return f"{float(value):.{digits}f}"
        mantissa, _, exponent = f"{float(value):.{digits}e}".partition("e")
        superscript = str.maketrans("0123456789+-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻")
        sign = "" if exponent.startswith("+") else "-"
        # cel-go's locale-aware scientific notation
        return f"{mantissa}×10{(sign + exponent[1:]).translate(superscript)}"  # noqa: RUF001
    if clause in "boxX":
        if isinstance(value, str | bytes) and clause in "xX":
            raw = value.encode() if isinstance(value, str) else bytes(value)
            text = raw.hex()
            return text.upper() if clause == "X" else text
        if not isinstance(value, int) or isinstance(value, celtypes.BoolType):
            base = {"b": "binary", "o": "octal"}.get(clause, "hex")
            also = " and bools" if clause == "b" else ""
            raise CelError(
                f"error during formatting: only integers{also} can be formatted as {base}"
            )
        spec = {"b": "b", "o": "o", "x": "x", "X": "X"}[clause]
        return format(int(value), spec)
    raise CelError(f'could not parse formatting clause: unrecognized formatting clause "{clause}"')


def _too_large_for_go(precision: int) -> bool:
    """fmt's parsenum: it gives up on a number once it is past a million, before a digit."""
    number = 0
    for digit in str(precision):
        if number > 1_000_000:
            return True
        number = number * 10 + int(digit)
    return False


def _as_string(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, celtypes.BoolType):
        return "true" if value else "false"
    if isinstance(value, celtypes.DurationType):
        return duration_text(value)
    if isinstance(value, celtypes.TimestampType):
        return str(value)
    if isinstance(value, celtypes.DoubleType):
        return double_text(float(value))
    if isinstance(value, list):
        return "[" + ", ".join(_as_string(item) for item in value) + "]"
    if isinstance(value, dict):
        pairs = sorted((_as_string(k), _as_string(v)) for k, v in value.items())
        return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    if isinstance(value, bytes):
        return bytes(value).decode(errors="replace")
    return str(value)


def double_text(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


def duration_text(value: celtypes.DurationType) -> str:
    seconds = value.total_seconds()
    return (str(int(seconds)) if seconds.is_integer() else repr(seconds)) + "s"


def format_string(text: Any, args: Any) -> celtypes.StringType:
    template = string_arg(text)
    if not isinstance(args, list):
        raise TypeError("no such overload")
    out: list[str] = []
    i, used = 0, 0
    while i < len(template):
        char = template[i]
        if char != "%":
            out.append(char)
            i += 1
            continue
        i += 1
        if i < len(template) and template[i] == "%":
            out.append("%")
            i += 1
            continue
        precision: int | None = None
        if i < len(template) and template[i] == ".":
            j = i + 1
            while j < len(template) and template[j] in "0123456789":
                j += 1
            precision = int(template[i + 1 : j] or 0)
            i = j
        if i >= len(template):
            raise CelError("could not parse formatting clause: unexpected end of string")
        if used >= len(args):
            raise CelError(f"index {used} out of range")
        out.append(_format_value(template[i], precision, args[used]))
        used += 1
        i += 1
    return celtypes.StringType("".join(out))
