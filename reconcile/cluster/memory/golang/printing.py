"""Decoded JSON values printed as Go prints them: `%v` (`go_print`, `go_float`), `%q`
(`go_quote`), `%#v` (`go_sharp`) and `encoding/json` (`go_json`). API server messages embed
values in these forms, so the memory backend must print them byte for byte alike."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

_SHORT_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
}
# encoding/json escapes these as \uXXXX so its output is safe inside HTML <script> tags
_JSON_ESCAPED = {"<", ">", "&", "\u2028", "\u2029"}


class GoFloat(float):
    """A float printed as Go's `%v` prints a float64 (`5`, `0.5`, `1e+06`)."""

    def __str__(self) -> str:
        return go_float(self)


def _shortest_digits(value: float) -> tuple[str, int]:
    """The shortest digits that read back as `value` and the position of the decimal point."""
    _, digit_tuple, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    return digits, len(digits) + int(exponent)


def _exponent_form(digits: str, point: int) -> str:
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    shown = point - 1
    return f"{mantissa}e{'-' if shown < 0 else '+'}{abs(shown):02d}"


def _decimal_form(digits: str, point: int) -> str:
    if point <= 0:
        return "0." + "0" * (-point) + digits
    if point >= len(digits):
        return digits + "0" * (point - len(digits))
    return digits[:point] + "." + digits[point:]


def go_float(value: float) -> str:
    """`%v` of a float64 (strconv's shortest `g`: an exponent below 1e-4 and from 1e+06)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    digits, point = _shortest_digits(value)
    exponent = point - 1
    if exponent < -4 or exponent >= 6:
        text = _exponent_form(digits, point)
    else:
        text = _decimal_form(digits, point)
    return ("-" if value < 0 else "") + text


def go_fixed(value: float) -> str:
    """strconv.FormatFloat(value, 'f', -1, 64): every digit, never an exponent."""
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    digits, point = _shortest_digits(value)
    return ("-" if value < 0 else "") + _decimal_form(digits, point)


def _json_float(value: float) -> str:
    """encoding/json's float64: `f` form, but `e` below 1e-6 and from 1e21 (`1e-7`, not `1e-07`)."""
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    if 1e-6 <= abs(value) < 1e21:
        return go_fixed(value)
    digits, point = _shortest_digits(value)
    text = _exponent_form(digits, point)
    mantissa, _, exponent = text.partition("e")
    sign, number = exponent[0], exponent[1:].lstrip("0") or "0"
    return ("-" if value < 0 else "") + f"{mantissa}e{sign}{number}"


def go_quote(text: str) -> str:
    """strconv.Quote (`%q`): printable characters kept, the rest escaped."""
    out = ['"']
    for char in text:
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif char.isprintable():
            out.append(char)
        elif char in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\x{ord(char):02x}")
        elif 0xD800 <= ord(char) <= 0xDFFF:
            out.append("\ufffd")  # a lone surrogate: Go decoded it as the replacement character
        elif ord(char) < 0x10000:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    out.append('"')
    return "".join(out)


def _json_string(text: str) -> str:
    out = ['"']
    for char in text:
        code = ord(char)
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif char in "\n\r\t\b\f":
            out.append(_SHORT_ESCAPES[char])
        elif code < 0x20 or char in _JSON_ESCAPED:
            out.append(f"\\u{code:04x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\\ufffd")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def go_json(value: Any) -> str:
    """encoding/json.Marshal of a decoded JSON value: keys sorted, no spaces."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _json_float(value)
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, list | tuple):
        return "[" + ",".join(go_json(item) for item in value) + "]"
    if isinstance(value, dict):
        pairs = (f"{_json_string(str(k))}:{go_json(value[k])}" for k in sorted(value))
        return "{" + ",".join(pairs) + "}"
    return _json_string(str(value))


def go_print(value: Any) -> str:
    """`%v` of a decoded JSON value (`[a 1 true]`, `map[k:v]`, `<nil>`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    if value is None:
        return "<nil>"
    if isinstance(value, list):
        return "[" + " ".join(go_print(item) for item in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_print(value[k])}" for k in sorted(value)) + "]"
    return str(value)


def go_sharp(value: Any) -> str:
    """`%#v` of a decoded JSON value (`map[string]interface {}{"a":1, "b":"x"}`)."""
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, list | tuple):
        return "[]interface {}{" + ", ".join(go_sharp(item) for item in value) + "}"
    if isinstance(value, dict):
        pairs = (f"{go_quote(str(k))}:{go_sharp(value[k])}" for k in sorted(value))
        return "map[string]interface {}{" + ", ".join(pairs) + "}"
    return go_quote(str(value))
