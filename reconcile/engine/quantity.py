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
