"""Which hosts a run's webhooks may call (`--allowed-hook-hosts`): the patterns and the match,
without I/O. A preview of a pull request runs the pull request's controllers; the list, set by
the workflow, keeps their webhooks from posting parents, children and related objects (Secrets
among them) to a host the pull request chose.

A pattern is a host (`hooks.example.com`, an IPv4 address, `[::1]`), optionally with a port
(`hooks.example.com:8443`, which then must match too), or `*.` and a domain for any host
under that domain (not the domain itself). Case and a trailing dot do not count.

A URL is matched as `specs.hook_url` parses it, the one reading the connection is made from: a
URL that parser refuses matches nothing.
"""

from __future__ import annotations

import ipaddress
import re

from reconcile.specs.hook_url import HookUrl, HookUrlError, parse_hook_url

_LABEL = r"[a-z0-9]([a-z0-9-]*[a-z0-9])?"
_HOST = re.compile(rf"(\*\.)?{_LABEL}(\.{_LABEL})*\Z")
_IPV6 = re.compile(r"\[[0-9a-f:.]+\]\Z")


def parse_host_patterns(values: list[str]) -> tuple[str, ...]:
    """The patterns of the option's values (each may hold several, split on commas and
    whitespace), normalised; ValueError naming one that is not a host pattern."""
    patterns: list[str] = []
    for value in values:
        for item in re.split(r"[,\s]+", value.strip()):
            if not item:
                continue
            host, port = _split_port(_normalise(item))
            normal = _host_pattern(host)
            pattern = f"{normal}:{port}" if port else normal or ""
            if not (normal and (not port or _port(port))):
                raise ValueError(
                    f"{item!r} is not a host pattern (host, host:port or *.domain, "
                    "e.g. hooks.example.com, 127.0.0.1:8443, *.svc.cluster.local)"
                )
            patterns.append(pattern)
    if not patterns:
        raise ValueError("names no host: give at least one (host, host:port or *.domain)")
    return tuple(dict.fromkeys(patterns))


def url_authority(url: str) -> tuple[str, str]:
    """(host, port) of a webhook URL as `parse_hook_url` reads it (IPv6 in brackets); the port
    is the scheme's default when the URL names none. ValueError when it is no webhook URL."""
    parsed = parse_hook_url(url)
    return parsed.host_for_url, str(parsed.port)


def host_allowed(url: str | HookUrl, patterns: tuple[str, ...]) -> bool:
    """Whether `url` (text, or as parsed) is on a host `patterns` allow; a URL that cannot be
    parsed is on none."""
    try:
        parsed = url if isinstance(url, HookUrl) else parse_hook_url(url)
    except HookUrlError:
        return False
    host, port = parsed.host_for_url, str(parsed.port)
    for pattern in patterns:
        want_host, want_port = _split_port(pattern)
        if want_port and want_port != port:
            continue
        if want_host.startswith("*."):
            if host.endswith(want_host[1:]) and host != want_host[2:]:
                return True
        elif host == want_host:
            return True
    return False


def _host_pattern(host: str) -> str | None:
    """The host pattern, normalised as `parse_hook_url` normalises a URL's host (an IPv6
    address compressed), or None when it is not one."""
    if _IPV6.match(host):
        try:
            return f"[{ipaddress.IPv6Address(host[1:-1]).compressed}]"
        except ValueError:
            return None
    if not _HOST.match(host):
        return None
    last = host.rsplit(".", 1)[-1]
    if last.isascii() and last.isdigit():  # an IPv4 address: as URLs must write it
        try:
            return host if str(ipaddress.IPv4Address(host)) == host else None
        except ValueError:
            return None
    return host


def _port(text: str) -> bool:
    return text.isascii() and text.isdigit() and 1 <= int(text) <= 65535 and len(text) <= 5


def _normalise(item: str) -> str:
    return item.lower().rstrip(".")


def _split_port(pattern: str) -> tuple[str, str]:
    if pattern.startswith("["):
        host, _, rest = pattern.partition("]")
        return host + "]", rest[1:] if rest.startswith(":") else ""
    host, colon, port = pattern.rpartition(":")
    return (host, port) if colon else (pattern, "")
