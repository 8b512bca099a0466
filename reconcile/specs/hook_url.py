"""A webhook's URL, parsed once: what `--allowed-hook-hosts` checks, which `endpointConfigs`
entry applies, and where the connection goes are all read from the same `HookUrl`.

Two parsers of one string may disagree: `urllib.parse` reads `http://127.0.0.2\\.x.test/` as
the host `127.0.0.2\\.x.test`, urllib3 as `127.0.0.2`. So the URL is read here by one strict
grammar (RFC 3986's, for http and https) and anything two parsers could read two ways is
refused, not guessed at: a backslash, whitespace or a control character anywhere; a character
outside ASCII; a fragment; more than one `@`; percent-encoding in the host; an IPv6 zone; a
scheme not in lower case; an IPv4 address in any form but four decimal numbers (`0x7f.1`,
`2130706433`, `0177.0.0.1`); an empty or malformed port. What is left is normalised once: the
host in lower case without a trailing dot, the port as a number (the scheme's when none is
given), the user and password decoded. `HookUrl.url` is the URL rebuilt from those parts, which
every parser reads the same way.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import unquote

from reconcile.objects.lazy_pattern import on_first_use
from reconcile.records import dataclass

DEFAULT_PORTS = {"http": 80, "https": 443}

_LABEL = on_first_use(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?")
_UNRESERVED_SUB = r"A-Za-z0-9\-._~!$&'()*+,;="
_USERINFO = on_first_use(rf"(?:[{_UNRESERVED_SUB}:]|%[0-9A-Fa-f]{{2}})*")
_TARGET = on_first_use(rf"(?:[{_UNRESERVED_SUB}:@/?]|%[0-9A-Fa-f]{{2}})*")
_NUMERIC_LABEL = on_first_use(r"(0x[0-9a-f]*|[0-9]+)")


class HookUrlError(ValueError):
    """Why a URL cannot be a webhook's, in words that do not repeat it (it may hold a
    password)."""


@dataclass(frozen=True)
class HookUrl:
    scheme: str  # http or https
    host: str  # lower case, no trailing dot; an IPv6 address without brackets
    port: int
    target: str  # the path and query, as sent in the request line (`/` at least)
    user: str = ""  # decoded
    password: str = ""

    @property
    def host_for_url(self) -> str:
        return f"[{self.host}]" if ":" in self.host else self.host

    @property
    def authority(self) -> str:
        """`host:port`, as `--allowed-hook-hosts` and messages name it."""
        return f"{self.host_for_url}:{self.port}"

    @property
    def netloc(self) -> str:
        """`host[:port]`, the port left out when it is the scheme's (as a Host header)."""
        default = DEFAULT_PORTS[self.scheme] == self.port
        return self.host_for_url if default else self.authority

    @property
    def url(self) -> str:
        """The URL without its user and password, rebuilt from the parts."""
        return f"{self.scheme}://{self.netloc}{self.target}"

    @property
    def has_userinfo(self) -> bool:
        return bool(self.user or self.password)


def parse_hook_url(text: str) -> HookUrl:
    """`text` as a webhook URL; HookUrlError saying why it cannot be one."""
    if not text.isascii():
        raise HookUrlError("it has a character outside ASCII in it (percent-encode it)")
    if any(c.isspace() or not c.isprintable() for c in text):
        raise HookUrlError("it has a space or a control character in it")
    if "\\" in text:
        raise HookUrlError("it has a backslash in it, which parsers read differently")
    scheme, sep, rest = text.partition("://")
    if not sep or scheme not in DEFAULT_PORTS:
        raise HookUrlError("its scheme must be http:// or https://, in lower case")
    if "#" in rest:
        raise HookUrlError("it has a fragment (#), which is never sent")
    end = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    authority, target = rest[:end], rest[end:]
    if not target.startswith("/"):
        target = "/" + target
    if not _TARGET().fullmatch(target):
        raise HookUrlError("its path or query has a character that must be percent-encoded")
    userinfo, at, hostport = authority.rpartition("@")
    if "@" in userinfo:
        raise HookUrlError("it has more than one @ before its path")
    if at and not _USERINFO().fullmatch(userinfo):
        raise HookUrlError("its user or password has a character that must be percent-encoded")
    user, _, password = userinfo.partition(":")
    host, port = _host_and_port(hostport, scheme)
    return HookUrl(scheme, host, port, target, unquote(user), unquote(password))


def _host_and_port(hostport: str, scheme: str) -> tuple[str, int]:
    if hostport.startswith("["):
        inside, bracket, after = hostport[1:].partition("]")
        if not bracket:
            raise HookUrlError("its IPv6 address has no closing ]")
        if "%" in inside:
            raise HookUrlError("its IPv6 address has a zone (%), which is not allowed")
        try:
            host = ipaddress.IPv6Address(inside).compressed
        except ValueError:
            raise HookUrlError("its IPv6 address is not one") from None
        port_text = after
    else:
        name, colon, port_digits = hostport.partition(":")
        host = _name(name)
        port_text = colon + port_digits
    return host, _port(port_text, scheme)


def _name(text: str) -> str:
    if not text:
        raise HookUrlError("it names no host")
    if "%" in text:
        raise HookUrlError("its host is percent-encoded")
    host = text.lower()
    if host.endswith("."):
        host = host[:-1]  # the same name, read once without it
    labels = host.split(".")
    if _NUMERIC_LABEL().fullmatch(labels[-1]) or all(_NUMERIC_LABEL().fullmatch(x) for x in labels):
        try:
            address = ipaddress.IPv4Address(host)
        except ValueError:
            address = None
        if address is None or str(address) != host:
            raise HookUrlError(
                "its host reads as an IPv4 address but is not one in four decimal numbers "
                "(a.b.c.d), the only form it is read in"
            )
        return host
    if len(host) > 253 or not all(_LABEL().fullmatch(label) for label in labels):
        raise HookUrlError(
            "its host is not a DNS name (letters, digits and '-' in dot-separated labels)"
        )
    return host


def _port(text: str, scheme: str) -> int:
    if not text:
        return DEFAULT_PORTS[scheme]
    digits = text[1:] if text.startswith(":") else ""
    if not text.startswith(":") or not re.fullmatch(r"[0-9]{1,5}", digits):
        raise HookUrlError("its port is not a number")
    port = int(digits)
    if not 1 <= port <= 65535:
        raise HookUrlError("its port is not between 1 and 65535")
    return port
