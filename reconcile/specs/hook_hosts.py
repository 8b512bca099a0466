"""Which hosts a run's webhooks may call (`--allowed-hook-hosts`): the patterns and the match,
without I/O. A preview of a pull request runs the pull request's controllers; the list, set by
the workflow, keeps their webhooks from posting parents, children and related objects (Secrets
among them) to a host the pull request chose.

A pattern is a host (`hooks.example.com`, an IPv4 address, `[::1]`), optionally with a port
(`hooks.example.com:8443`, which then must match too), or `*.` and a domain for any host
under that domain (not the domain itself). Case and a trailing dot do not count.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

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
            pattern = _normalise(item)
            host, port = _split_port(pattern)
            if not (_HOST.match(host) or _IPV6.match(host)) or (port and not port.isdigit()):
                raise ValueError(
                    f"{item!r} is not a host pattern (host, host:port or *.domain, "
                    "e.g. hooks.example.com, 127.0.0.1:8443, *.svc.cluster.local)"
                )
            patterns.append(pattern)
    if not patterns:
        raise ValueError("names no host: give at least one (host, host:port or *.domain)")
    return tuple(dict.fromkeys(patterns))


def url_authority(url: str) -> tuple[str, str]:
    """(host, port) of a webhook URL, normalised; the port is the scheme's default when the
    URL names none."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower().rstrip(".")
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        port = 443 if parts.scheme == "https" else 80
    return host, str(port)


def host_allowed(url: str, patterns: tuple[str, ...]) -> bool:
    host, port = url_authority(url)
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


def _normalise(item: str) -> str:
    return item.lower().rstrip(".")


def _split_port(pattern: str) -> tuple[str, str]:
    if pattern.startswith("["):
        host, _, rest = pattern.partition("]")
        return host + "]", rest[1:] if rest.startswith(":") else ""
    host, colon, port = pattern.rpartition(":")
    return (host, port) if colon else (pattern, "")
