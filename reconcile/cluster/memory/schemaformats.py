"""The string `format`s a CRD's schema can declare that the API server checks (kube-openapi's
strfmt registry); any other format is dropped from the schema and checks nothing. Numeric
formats (`int32`, `int64`, `float`, `double`) are among the dropped ones."""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Callable
from datetime import date, datetime
from urllib.parse import urlparse


def _matches(pattern: str, flags: int = 0) -> Callable[[str], bool]:
    compiled = re.compile(pattern, flags)
    return lambda text: compiled.search(text) is not None


def _is_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return len(text) == 10


_DATE_TIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?$", re.IGNORECASE
)


def _is_date_time(text: str) -> bool:
    if not _DATE_TIME.match(text):
        return False
    try:
        datetime.fromisoformat(text[:19])
    except ValueError:
        return False
    return True


def _is_base64(text: str) -> bool:
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _is_ip(version: int) -> Callable[[str], bool]:
    def check(text: str) -> bool:
        try:
            return ipaddress.ip_address(text).version == version
        except ValueError:
            return False

    return check


def _is_cidr(text: str) -> bool:
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return False
    return "/" in text


def _is_request_uri(text: str) -> bool:
    parsed = urlparse(text)
    return bool(parsed.scheme) or text.startswith("/")


_DURATION = re.compile(
    r"^(\s*[-+]?\d+(\.\d+)?\s*(ns|nano\w*|us|µs|micro\w*|ms|milli\w*|s|sec\w*|m|min\w*|h|hr|hour\w*"
    r"|d|day\w*|w|wk|week\w*)\s*)+$",
    re.IGNORECASE,
)

_UUID = r"^[0-9a-f]{8}-?[0-9a-f]{4}-?{v}[0-9a-f]{3}-?{r}[0-9a-f]{3}-?[0-9a-f]{12}$"

CHECKS: dict[str, Callable[[str], bool]] = {
    "bsonobjectid": _matches(r"^[0-9a-fA-F]{24}$"),
    "uri": _is_request_uri,
    "email": _matches(r"^[^@\s]+@[^@\s]+$"),
    "hostname": _matches(
        r"^([a-zA-Z0-9]((-?[a-zA-Z0-9]{0,62})?)|([a-zA-Z0-9](([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)"
        r"(\.)){1,}([a-zA-Z]){2,63})$"
    ),
    "ipv4": _is_ip(4),
    "ipv6": _is_ip(6),
    "cidr": _is_cidr,
    "mac": _matches(
        r"^([0-9A-Fa-f]{2}[:-]){5,19}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{4}\.){2,9}[0-9A-Fa-f]{4}$"
    ),
    "uuid": _matches(_UUID.replace("{v}", "[0-9a-f]").replace("{r}", "[0-9a-f]"), re.I),
    "uuid3": _matches(_UUID.replace("{v}", "3").replace("{r}", "[0-9a-f]"), re.I),
    "uuid4": _matches(_UUID.replace("{v}", "4").replace("{r}", "[89ab]"), re.I),
    "uuid5": _matches(_UUID.replace("{v}", "5").replace("{r}", "[89ab]"), re.I),
    "ssn": _matches(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$"),
    "hexcolor": _matches(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"),
    "rgbcolor": _matches(
        r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])"
        r"\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$"
    ),
    "byte": _is_base64,
    "password": lambda _: True,
    "date": _is_date,
    "duration": _matches(_DURATION.pattern, re.IGNORECASE),
    "datetime": _is_date_time,
}


def check_of(format_name: str) -> Callable[[str], bool] | None:
    """The check for a declared format; None when the server drops the format."""
    return CHECKS.get(format_name.replace("-", ""))
