"""Kubernetes' CEL types and their functions (k8s.io/apiserver/pkg/cel/library): `url`,
`quantity` and the `format` library, with the library's error words; `ip` and `cidr` are in
`addresses`, and `functions` gives them all."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import parse_qs, urlsplit

from celpy import celtypes

from reconcile.cluster.memory.cel import addresses
from reconcile.cluster.memory.cel.errors import CelError, cel_function
from reconcile.cluster.memory.cel.runtime import (
    INT64_MAX,
    INT64_MIN,
    NONE,
    Namespace,
    Optional,
)
from reconcile.cluster.memory.cel.values import parse_timestamp
from reconcile.cluster.memory.validation import name_rules, objectmeta

# --- url ----------------------------------------------------------------------------------------


class URL:
    def __init__(self, text: str) -> None:
        self.text = text
        self.parts = urlsplit(text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, URL) and self.text == other.text

    def __hash__(self) -> int:
        return hash(self.text)


def _parse_url(text: str) -> URL:
    """Go's `url.ParseRequestURI`: an absolute URI or an absolute path, no fragment."""
    if not text:
        raise ValueError('parse "": empty url')
    if re.search(r"[\x00-\x1f\x7f ]", text):
        raise ValueError(f'parse "{text}": invalid character in URL')
    scheme = re.match(r"^([a-zA-Z][a-zA-Z0-9+.-]*):", text)
    if not text.startswith("/") and scheme is None:
        raise ValueError(f'parse "{text}": invalid URI for request')
    parsed = URL(text)
    if parsed.parts.port is None and re.search(r":[^0-9/\]]", parsed.parts.netloc.split("@")[-1]):
        raise ValueError(f'parse "{text}": invalid port')
    return parsed


def _url(text: Any) -> URL:
    try:
        return _parse_url(str(text))
    except ValueError as error:
        raise CelError(f"URL parse error during conversion from string: {error}") from error


def _is_url(text: Any) -> celtypes.BoolType:
    try:
        _parse_url(str(text))
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _url_part(name: str) -> Callable[[Any], Any]:
    def part(url: Any) -> Any:
        if not isinstance(url, URL):
            raise TypeError("no such overload")
        parts = url.parts
        host = parts.netloc.rsplit("@", 1)[-1]
        if name == "getScheme":
            return celtypes.StringType(parts.scheme)
        if name == "getHost":
            return celtypes.StringType(host)
        if name == "getHostname":
            hostname = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            return celtypes.StringType(hostname.strip("[]"))
        if name == "getPort":
            port = host.rsplit(":", 1)[1] if ":" in host and not host.endswith("]") else ""
            return celtypes.StringType(port)
        if name == "getEscapedPath":
            return celtypes.StringType(parts.path)
        query = parse_qs(parts.query, keep_blank_values=True)
        return celtypes.MapType(
            {
                celtypes.StringType(k): celtypes.ListType([celtypes.StringType(x) for x in vals])
                for k, vals in query.items()
            }
        )

    return part


# --- quantity -----------------------------------------------------------------------------------

_QUANTITY = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))([eEinumkKMGTP]*[-+]?[0-9]*)$")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_QUANTITY_ERROR = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


class Quantity:
    def __init__(self, amount: Decimal) -> None:
        self.amount = amount

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.amount == other.amount

    def __hash__(self) -> int:
        return hash(self.amount)

    def compare_to(self, other: Quantity) -> int:
        return (self.amount > other.amount) - (self.amount < other.amount)


def parse_quantity(text: str) -> Quantity:
    match = _QUANTITY.match(text)
    if not match:
        raise ValueError(_QUANTITY_ERROR)
    number, suffix = match.groups()
    try:
        amount = Decimal(number)
    except InvalidOperation as error:
        raise ValueError(_QUANTITY_ERROR) from error
    if suffix in _BINARY:
        return Quantity(amount * _BINARY[suffix])
    if suffix in _DECIMAL:
        return Quantity(amount.scaleb(_DECIMAL[suffix]))
    exponent = re.match(r"^[eE]([-+]?[0-9]+)$", suffix)
    if exponent:
        return Quantity(amount.scaleb(int(exponent.group(1))))
    raise ValueError("unable to parse quantity's suffix")


def _quantity(text: Any) -> Quantity:
    try:
        return parse_quantity(str(text))
    except ValueError as error:
        raise CelError(str(error)) from error


def _is_quantity(text: Any) -> celtypes.BoolType:
    try:
        parse_quantity(str(text))
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _quantity_arg(value: Any) -> Quantity:
    if isinstance(value, Quantity):
        return value
    if isinstance(value, int) and not isinstance(value, celtypes.BoolType):
        return Quantity(Decimal(int(value)))
    raise TypeError("no such overload")


def _quantity_method(name: str) -> Callable[..., Any]:
    def method(quantity: Any, *args: Any) -> Any:
        if not isinstance(quantity, Quantity):
            raise TypeError("no such overload")
        amount = quantity.amount
        if name == "sign":
            return celtypes.IntType((amount > 0) - (amount < 0))
        if name == "isInteger":
            whole = amount == amount.to_integral_value()
            return celtypes.BoolType(bool(whole and INT64_MIN <= amount <= INT64_MAX))
        if name == "asInteger":
            if amount != amount.to_integral_value() or not INT64_MIN <= amount <= INT64_MAX:
                raise CelError("cannot convert value to integer")
            return celtypes.IntType(int(amount))
        if name == "asApproximateFloat":
            return celtypes.DoubleType(float(amount))
        other = _quantity_arg(args[0]) if len(args) == 1 else None
        if other is None:
            raise TypeError("no such overload")
        if name == "add":
            return Quantity(amount + other.amount)
        if name == "sub":
            return Quantity(amount - other.amount)
        if not isinstance(args[0], Quantity):
            raise TypeError("no such overload")
        order = quantity.compare_to(other)
        if name == "isGreaterThan":
            return celtypes.BoolType(order > 0)
        if name == "isLessThan":
            return celtypes.BoolType(order < 0)
        return celtypes.IntType(order)

    return method


# --- format -------------------------------------------------------------------------------------


def _prefixed(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    # a generateName prefix: a trailing dash is allowed
    return lambda s: check(s[:-1] + "a" if s.endswith("-") else s)


def _label_value(text: str) -> list[str]:
    errors = objectmeta.metadata_errors({"labels": {"k": text}})
    return [e.detail for e in errors]


def _uri(text: str) -> list[str]:
    try:
        _parse_url(text)
    except ValueError:
        return ["invalid URI"]
    return []


def _uuid(text: str) -> list[str]:
    try:
        uuid.UUID(text)
    except ValueError:
        return ["does not match the UUID format"]
    return []


def _byte(text: str) -> list[str]:
    import base64
    import binascii

    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return ["invalid base64"]
    return []


_FORMATS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": name_rules.dns1123_label_errors,
    "dns1123Subdomain": name_rules.dns1123_subdomain_errors,
    "dns1035Label": name_rules.dns1035_label_errors,
    "qualifiedName": name_rules.qualified_name_errors,
    "dns1123LabelPrefix": _prefixed(name_rules.dns1123_label_errors),
    "dns1123SubdomainPrefix": _prefixed(name_rules.dns1123_subdomain_errors),
    "dns1035LabelPrefix": _prefixed(name_rules.dns1035_label_errors),
    "labelValue": _label_value,
    "uri": _uri,
    "uuid": _uuid,
    "byte": _byte,
    "date": lambda s: [] if parse_timestamp(s, date_only=True) else ["invalid date"],
    "datetime": lambda s: [] if parse_timestamp(s) else ["invalid datetime"],
}


class Format:
    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Format) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)


def _named(receiver: Any, name: Any) -> Optional:
    if not isinstance(receiver, Namespace) or receiver.name != "format":
        raise TypeError("no such overload")
    return Optional(Format(str(name)), present=True) if str(name) in _FORMATS else NONE


def _validate(fmt: Any, text: Any) -> Optional:
    if not isinstance(fmt, Format) or not isinstance(text, str):
        raise TypeError("no such overload")
    errors = _FORMATS[fmt.name](str(text))
    if not errors:
        return NONE
    return Optional(celtypes.ListType([celtypes.StringType(e) for e in errors]), present=True)


def _format_getter(name: str) -> Callable[[Any], Format]:
    def get(receiver: Any) -> Format:
        if not isinstance(receiver, Namespace) or receiver.name != "format":
            raise TypeError("no such overload")
        return Format(name)

    return get


def functions() -> dict[str, Callable[..., Any]]:
    plain: dict[str, Callable[..., Any]] = {
        "url": _url,
        "isURL": _is_url,
        **{
            name: _url_part(name)
            for name in (
                "getScheme",
                "getHost",
                "getHostname",
                "getPort",
                "getEscapedPath",
                "getQuery",
            )
        },
        "quantity": _quantity,
        "isQuantity": _is_quantity,
        **{
            name: _quantity_method(name)
            for name in (
                "sign",
                "isInteger",
                "asInteger",
                "asApproximateFloat",
                "add",
                "sub",
                "isGreaterThan",
                "isLessThan",
                "compareTo",
            )
        },
        **addresses.functions(),
        "named": _named,
        "validate": _validate,
        **{name: _format_getter(name) for name in _FORMATS},
    }
    return {name: cel_function(function) for name, function in plain.items()}


FORMAT_NAMES = tuple(_FORMATS)
