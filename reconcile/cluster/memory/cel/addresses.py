"""Kubernetes' CEL `ip` and `cidr` types and their functions (k8s.io/apiserver/pkg/cel/library
ip.go, cidr.go): parsed as Go's netip parses them (no zones, no IPv4-mapped IPv6 addresses),
with the library's error words."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any

from celpy import celtypes

from reconcile.cluster.memory.cel.errors import CelError
from reconcile.cluster.memory.cel.runtime import Namespace

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class IP:
    def __init__(self, address: Address) -> None:
        self.address = address

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IP) and self.address == other.address

    def __hash__(self) -> int:
        return hash(self.address)

    def __str__(self) -> str:
        return str(self.address)


class CIDR:
    def __init__(self, address: Address, prefix: int) -> None:
        self.address, self.prefix = address, prefix

    @property
    def network(self) -> Network:
        return ipaddress.ip_network(f"{self.address}/{self.prefix}", strict=False)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, CIDR)
            and self.address == other.address
            and self.prefix == other.prefix
        )

    def __hash__(self) -> int:
        return hash((self.address, self.prefix))

    def __str__(self) -> str:
        return f"{self.address}/{self.prefix}"


def parse_ip(text: str) -> Address:
    if "%" in text:
        raise ValueError("IP address with zone value is not allowed")
    try:
        address = ipaddress.ip_address(text)
    except ValueError as error:
        raise ValueError(
            f"IP Address {text!r} parse error during conversion from string"
        ) from error
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        raise ValueError("IPv4-mapped IPv6 address is not allowed")
    return address


def parse_cidr(text: str) -> CIDR:
    address_text, slash, prefix_text = text.partition("/")
    if not slash or not prefix_text.isdigit() or "%" in address_text:
        raise ValueError(f"network address parse error during conversion from string: {text!r}")
    address = parse_ip(address_text)
    prefix = int(prefix_text)
    if prefix > address.max_prefixlen or (len(prefix_text) > 1 and prefix_text[0] == "0"):
        raise ValueError(f"network address parse error during conversion from string: {text!r}")
    return CIDR(address, prefix)


def _ip(value: Any) -> IP:
    if isinstance(value, CIDR):
        return IP(value.address)
    try:
        return IP(parse_ip(str(value)))
    except ValueError as error:
        raise CelError(str(error)) from error


def _cidr(value: Any) -> CIDR:
    try:
        return parse_cidr(str(value))
    except ValueError as error:
        raise CelError(str(error)) from error


def _is(parse: Callable[[str], Any]) -> Callable[[Any], celtypes.BoolType]:
    def check(value: Any) -> celtypes.BoolType:
        try:
            parse(str(value))
        except ValueError:
            return celtypes.BoolType(False)
        return celtypes.BoolType(True)

    return check


def _is_canonical(receiver: Any, text: Any) -> celtypes.BoolType:
    if not isinstance(receiver, Namespace) or receiver.name != "ip":
        raise TypeError("no such overload")
    try:
        address = parse_ip(str(text))
    except ValueError as error:
        raise CelError(str(error)) from error
    return celtypes.BoolType(str(address) == str(text))


def _global_unicast(address: Address) -> bool:
    """Go's `IsGlobalUnicast` (private ranges count)."""
    if address.is_unspecified or address.is_loopback or address.is_multicast:
        return False
    if address.is_link_local:
        return False
    return not (isinstance(address, ipaddress.IPv4Address) and int(address) == 2**32 - 1)


def _ip_method(name: str) -> Callable[[Any], Any]:
    def method(ip: Any) -> Any:
        if isinstance(ip, CIDR) and name == "ip":
            return IP(ip.address)
        if not isinstance(ip, IP):
            raise TypeError("no such overload")
        address = ip.address
        checks: dict[str, Callable[[], bool]] = {
            "isUnspecified": lambda: address.is_unspecified,
            "isLoopback": lambda: address.is_loopback,
            "isLinkLocalMulticast": lambda: (
                address.is_multicast
                and address
                in ipaddress.ip_network("224.0.0.0/24" if address.version == 4 else "ff02::/16")
            ),
            "isLinkLocalUnicast": lambda: address.is_link_local and not address.is_multicast,
            "isGlobalUnicast": lambda: _global_unicast(address),
        }
        if name == "family":
            return celtypes.IntType(address.version)
        return celtypes.BoolType(checks[name]())

    return method


def _contains_ip(cidr: Any, other: Any) -> celtypes.BoolType:
    if not isinstance(cidr, CIDR):
        raise TypeError("no such overload")
    address = other.address if isinstance(other, IP) else _ip(other).address
    return celtypes.BoolType(address.version == cidr.address.version and address in cidr.network)


def _contains_cidr(cidr: Any, other: Any) -> celtypes.BoolType:
    if not isinstance(cidr, CIDR):
        raise TypeError("no such overload")
    inner = other if isinstance(other, CIDR) else _cidr(other)
    if inner.address.version != cidr.address.version or inner.prefix < cidr.prefix:
        return celtypes.BoolType(False)
    return celtypes.BoolType(inner.network.subnet_of(cidr.network))  # type: ignore[arg-type]


def _masked(cidr: Any) -> CIDR:
    if not isinstance(cidr, CIDR):
        raise TypeError("no such overload")
    return CIDR(cidr.network.network_address, cidr.prefix)


def _prefix_length(cidr: Any) -> celtypes.IntType:
    if not isinstance(cidr, CIDR):
        raise TypeError("no such overload")
    return celtypes.IntType(cidr.prefix)


def functions() -> dict[str, Callable[..., Any]]:
    """The ip and cidr functions by name (not yet wrapped as CEL functions)."""
    return {
        "ip": _ip_or_method,
        "isIP": _is(parse_ip),
        "isCanonical": _is_canonical,
        **{
            name: _ip_method(name)
            for name in (
                "family",
                "isUnspecified",
                "isLoopback",
                "isLinkLocalMulticast",
                "isLinkLocalUnicast",
                "isGlobalUnicast",
            )
        },
        "cidr": _cidr,
        "isCIDR": _is(parse_cidr),
        "containsIP": _contains_ip,
        "containsCIDR": _contains_cidr,
        "masked": _masked,
        "prefixLength": _prefix_length,
    }


def _ip_or_method(value: Any) -> IP:
    """`ip('10.0.0.1')` and `cidr('10.0.0.0/8').ip()` share a name."""
    return _ip(value)
