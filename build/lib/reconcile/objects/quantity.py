"""Kubernetes resource quantities (`500m`, `1Gi`, `1.5`, `2e3`) compared by value.

The API server stores a quantity in canonical form (`0.5` as `500m`, `1024Mi` as `1Gi`, `1` as
`"1"`), so a hook's value and the stored one must be compared by what they mean.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
}
_QUANTITY = re.compile(
    r"^(?P<number>[+-]?(?:\d+\.?\d*|\.\d+))"
    r"(?:(?P<exponent>[eE][+-]?\d+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$"
)


def parse_quantity(value: Any) -> Decimal | None:
    """The value of a quantity written as a string or a JSON number; None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return Decimal(str(value))
        except InvalidOperation:
            return None
    if not isinstance(value, str):
        return None
    match = _QUANTITY.match(value.strip())
    if match is None:
        return None
    number = Decimal(match.group("number"))
    if match.group("exponent"):
        return number * Decimal(10) ** int(match.group("exponent")[1:])
    suffix = match.group("suffix") or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    return number * _DECIMAL[suffix]


def same_quantity(a: Any, b: Any) -> bool:
    """True when both are quantities of the same value."""
    left, right = parse_quantity(a), parse_quantity(b)
    return left is not None and right is not None and left == right


_DECIMAL_SUFFIXES = {
    -9: "n",
    -6: "u",
    -3: "m",
    0: "",
    3: "k",
    6: "M",
    9: "G",
    12: "T",
    15: "P",
    18: "E",
}
_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_NANO = Decimal("1e-9")


def canonical_quantity(value: Any) -> str | None:
    """The form kube-apiserver stores a quantity in (apimachinery's `Quantity.String`), or None
    when `value` is not a quantity.

    The suffix family written is kept (binary `Mi`, decimal `m`/`k`, exponent `e3`); the value is
    rounded up to nano units and shown with the largest suffix that keeps it whole: `0.5` is
    `500m`, `1024Mi` is `1Gi`, `1.5Gi` is `1536Mi`. A binary value below 1024 or not whole in bytes
    is shown in decimal (`0.5Ki` is `512`).
    """
    number = parse_quantity(value)
    if number is None:
        return None
    text = str(value).strip()
    binary = text[-2:] in _BINARY
    exponent_form = not binary and bool(re.search(r"[eE][+-]?\d+$", text))
    number = _round_up_to_nano(number)
    if binary and abs(number) >= 1024 and number == number.to_integral_value():
        whole, power = int(number), 0
        while whole != 0 and whole % 1024 == 0 and power < len(_BINARY_SUFFIXES) - 1:
            whole //= 1024
            power += 1
        return f"{whole}{_BINARY_SUFFIXES[power]}"
    mantissa, exponent = _base_1000(number)
    if exponent_form:
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    if exponent in _DECIMAL_SUFFIXES:
        return f"{mantissa}{_DECIMAL_SUFFIXES[exponent]}"
    return f"{mantissa}e{exponent}"


def _round_up_to_nano(number: Decimal) -> Decimal:
    scaled = number / _NANO
    whole = scaled.to_integral_value(rounding="ROUND_CEILING")
    return whole * _NANO


def _base_1000(number: Decimal) -> tuple[int, int]:
    """`number` as mantissa * 10**exponent, exponent a multiple of 3 and as large as keeps the
    mantissa whole (number has at most nine decimals)."""
    mantissa, exponent = int(number / _NANO), -9
    if mantissa == 0:
        return 0, 0
    while mantissa % 1000 == 0:
        mantissa //= 1000
        exponent += 3
    return mantissa, exponent
