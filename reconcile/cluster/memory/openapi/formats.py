"""The `format`s of a CRD's schema the API server keeps, per release, and kube-openapi's check
of each (its strfmt registry). A format the server does not keep is stripped from the schema
and checks nothing.

apiextensions-apiserver keeps the formats of its `supportedFormats` list (formats.go; the same
list from 1.16 on: `bsonobjectid`, `uri`, `email`, `hostname`, `ipv4`, `ipv6`, `cidr`, `mac`,
the `uuid`s, the `isbn`s, `creditcard`, `ssn`, `hexcolor`, `rgbcolor`, `byte`, `password`,
`date`, `duration`, `date-time`), compared after dropping `-`. `k8s-short-name` and
`k8s-long-name` joined the list for 1.34 (commit 01feeebd9), but the list is read at the
server's compatibility version, one release behind by default: 1.35 is the first to check them.
Until 1.36 the list applied whatever the type; from 1.36 (0835a2fa9, "Stop stripping valid
formats for number/integer types") an `integer` keeps `int32`/`int64`, a `number`
`float`/`double`, a `string` (or a schema of no single type) the list, and any other type none.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Any

from reconcile.cluster.memory.golang import parsing
from reconcile.objects.lazy_pattern import on_first_use

Schema = dict[str, Any]

_BASE_FORMATS = frozenset(
    {
        "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid",
        "uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor",
        "rgbcolor", "byte", "password", "date", "duration", "datetime",
    }
)  # fmt: skip
_KUBERNETES_NAME_FORMATS = frozenset({"k8sshortname", "k8slongname"})
KUBERNETES_NAME_FORMATS_SINCE = 35
# kube-openapi 6a51b86: `ipv4` and `cidr` read by k8s.io/utils/net's parsers, which allow
# leading zeros (`01.2.3.4`) as Go did before 1.17; the 1.20 build tested against (Go 1.19)
# refuses them
SLOPPY_ADDRESSES_SINCE = 23
FORMATS_BY_TYPE_SINCE = 36
_NUMERIC_FORMATS = {"integer": ("int32", "int64"), "number": ("float", "double")}


def _normalized(name: str) -> str:
    """go-openapi's name normalization: `date-time` is `datetime`."""
    return name.replace("-", "")


def supported_formats(minor: int) -> frozenset[str]:
    """The (normalized) string formats the server of release 1.`minor` keeps."""
    if minor >= KUBERNETES_NAME_FORMATS_SINCE:
        return _BASE_FORMATS | _KUBERNETES_NAME_FORMATS
    return _BASE_FORMATS


def schema_types(schema: Schema) -> list[str]:
    """The schema's types as kube-openapi sees them (int-or-string is both)."""
    if schema.get("x-kubernetes-int-or-string") is True:
        return ["integer", "string"]
    wanted = schema.get("type")
    return [wanted] if isinstance(wanted, str) and wanted else []


def kept_format(schema: Schema, minor: int) -> str:
    """The schema's `format` once the server of release 1.`minor` has stripped it ("": none)."""
    declared = schema.get("format")
    if not isinstance(declared, str) or not declared:
        return ""
    types = schema_types(schema)
    single = types[0] if len(types) == 1 and minor >= FORMATS_BY_TYPE_SINCE else ""
    if single in _NUMERIC_FORMATS:
        return declared if declared in _NUMERIC_FORMATS[single] else ""
    if single not in ("", "string"):
        return ""
    return declared if _normalized(declared) in supported_formats(minor) else ""


def format_check(name: str, minor: int) -> Callable[[str], bool] | None:
    """kube-openapi's check of a string in format `name` on release 1.`minor`; None when the
    registry has none (the numeric formats), so no string is checked against it."""
    normalized = _normalized(name)
    sloppy = minor >= SLOPPY_ADDRESSES_SINCE
    if normalized == "ipv4":
        return lambda text: parsing.parse_ip(text, sloppy) and "." in text
    if normalized == "cidr":
        return lambda text: parsing.parse_cidr(text, sloppy)
    return _CHECKS.get(normalized)


# --- the checks (kube-openapi pkg/validation/strfmt and its copy of govalidator) --------------

_GO_SPACE = "[\t\n\f\r ]"  # RE2's \s: no \v, unlike Python's


def _full_match(pattern: str, flags: int = 0) -> Callable[[str], bool]:
    compiled = on_first_use(pattern, flags | re.ASCII)  # most schemas name no format
    return lambda text: compiled().fullmatch(text) is not None


_UUID = r"[0-9a-f]{8}-?[0-9a-f]{4}-?%s[0-9a-f]{3}-?%s[0-9a-f]{3}-?[0-9a-f]{12}"
_HOSTNAME_CLASSES = on_first_use(
    r"[a0s]((-?[a0s]{0,62})?)|([a0s](([a0s-]{0,61}[a0s])?)(\.)){1,}(a){2,63}"
)
_CREDIT_CARD = on_first_use(
    r"(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}"
    r"|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})"
)
_DATE_TIME_CLOCK = on_first_use(
    r"([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))"
)
_SCALA_DURATION = on_first_use(rf"(([0-9]+){_GO_SPACE}*([A-Za-z\u00b5]+))")
_SCALA_UNITS = (
    ("ns", "nano"),
    ("us", "\u00b5s", "micro"),
    ("ms", "milli"),
    ("s", "sec"),
    ("m", "min"),
    ("h", "hr", "hour"),
    ("d", "day"),
    ("w", "wk", "week"),
)
_K8S_SHORT_NAME = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"


def _hostname_class(char: str) -> str:
    """The hostname pattern's classes: letters (\\p{L}), digits, symbols (\\p{S}), `-`, `.`."""
    if char in "-.":
        return char
    if "0" <= char <= "9":
        return "0"
    category = unicodedata.category(char)
    return "a" if category[0] == "L" else "s" if category[0] == "S" else "!"


def _is_hostname(text: str) -> bool:
    classes = "".join(_hostname_class(char) for char in text)
    if _HOSTNAME_CLASSES().fullmatch(classes) is None or len(text.encode()) > 255:
        return False
    return all(len(label.encode()) <= 63 for label in text.split("."))


def _is_isbn10(text: str) -> bool:
    digits = re.sub(rf"({_GO_SPACE}|-)+", "", text)
    if not re.fullmatch(r"[0-9]{9}X|[0-9]{10}", digits):
        return False
    total = sum((i + 1) * int(d) for i, d in enumerate(digits[:9]))
    total += 10 * (10 if digits[9] == "X" else int(digits[9]))
    return total % 11 == 0


def _is_isbn13(text: str) -> bool:
    digits = re.sub(rf"({_GO_SPACE}|-)+", "", text)
    if not re.fullmatch(r"[0-9]{13}", digits):
        return False
    total = sum((3 if i % 2 else 1) * int(d) for i, d in enumerate(digits[:12]))
    return int(digits[12]) == (10 - total % 10) % 10


def _is_credit_card(text: str) -> bool:
    digits = re.sub(r"[^0-9]+", "", text)
    if _CREDIT_CARD().fullmatch(digits) is None:
        return False
    total = 0
    for position, digit in enumerate(reversed(digits)):
        value = int(digit) * (2 if position % 2 else 1)
        total += value % 10 + 1 if value >= 10 else value
    return total % 10 == 0


def _is_ssn(text: str) -> bool:
    return (
        len(text.encode()) == 11
        and re.fullmatch(r"[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}", text) is not None
    )


def _is_date_time(text: str) -> bool:
    """strfmt.IsDateTime: a date, `t`, a clock with a zone, compared as it compares them."""
    if len(text.encode()) < 4:
        return False
    parts = text.lower().split("t")
    if len(parts) < 2 or not parsing.parse_full_date(parts[0]):
        return False
    clock = _DATE_TIME_CLOCK().fullmatch(parts[1])
    if clock is None:
        return False
    return clock[1] <= "23" and clock[2] <= "59" and clock[3] <= "59"


def _is_duration(text: str) -> bool:
    """strfmt.ParseDuration: Go's syntax, else any `<n> <unit>` in the text (`3 days`)."""
    if parsing.parse_go_duration(text):
        return True
    found = False
    for _, number, unit_text in _SCALA_DURATION().findall(text):
        if len(number.lstrip("0")) > 19 or int(number) > 2**63 - 1:
            return False  # strconv.Atoi fails: the whole parse does
        unit = unit_text.strip().lower()
        for variants in _SCALA_UNITS:
            last = len(variants) - 1
            if any(
                (i == last and unit.startswith(variant)) or variant == unit
                for i, variant in enumerate(variants)
            ):
                found = True
    return found


def _is_short_name(text: str) -> bool:
    return len(text.encode()) <= 63 and re.fullmatch(_K8S_SHORT_NAME, text) is not None


def _is_long_name(text: str) -> bool:
    pattern = rf"{_K8S_SHORT_NAME}(\.{_K8S_SHORT_NAME})*"
    return len(text.encode()) <= 253 and re.fullmatch(pattern, text) is not None


_RGB_PART = r"\s*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])\s*".replace(r"\s", _GO_SPACE)

_CHECKS: dict[str, Callable[[str], bool]] = {
    "bsonobjectid": _full_match(r"[0-9a-fA-F]{24}"),
    "uri": parsing.parse_request_uri,
    "email": parsing.parse_mail_address,
    "hostname": _is_hostname,
    "ipv6": lambda text: parsing.parse_ip(text, sloppy=False) and ":" in text,
    "mac": parsing.parse_mac,
    "uuid": _full_match(_UUID % ("[0-9a-f]", "[0-9a-f]"), re.IGNORECASE),
    "uuid3": _full_match(_UUID % ("3", "[0-9a-f]"), re.IGNORECASE),
    "uuid4": _full_match(_UUID % ("4", "[89ab]"), re.IGNORECASE),
    "uuid5": _full_match(_UUID % ("5", "[89ab]"), re.IGNORECASE),
    "isbn": lambda text: _is_isbn10(text) or _is_isbn13(text),
    "isbn10": _is_isbn10,
    "isbn13": _is_isbn13,
    "creditcard": _is_credit_card,
    "ssn": _is_ssn,
    "hexcolor": _full_match(r"#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})"),
    "rgbcolor": _full_match(rf"rgb\({_RGB_PART},{_RGB_PART},{_RGB_PART}\)"),
    "byte": _full_match(
        r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})"
    ),
    "password": lambda _: True,
    "date": parsing.parse_full_date,
    "duration": _is_duration,
    "datetime": _is_date_time,
    "k8sshortname": _is_short_name,
    "k8slongname": _is_long_name,
}
