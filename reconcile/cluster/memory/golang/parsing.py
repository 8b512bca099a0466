"""Go standard library parsers the API server's string formats call, ported for their verdicts
only (valid or not): net.ParseIP/ParseCIDR (strict: Go 1.17 on refuses `01.2.3.4`) and
k8s.io/utils/net's "sloppy" copies of Go 1.16's (leading zeros allowed), net.ParseMAC,
net/url.ParseRequestURI, net/mail.ParseAddress, time.ParseDuration and time.Parse of a date.
Python's own parsers disagree at the edges (`urlparse` accepts anything, `fromisoformat`
reads ISO weeks)."""

from __future__ import annotations

_BIG = 0xFFFFFF  # where Go's dtoi/xtoi give up
_HEX = "0123456789abcdefABCDEF"


def _leading_number(text: str, base: int) -> tuple[int, int] | None:
    """Go's dtoi (base 10) / xtoi (base 16): the value and length of the leading digits."""
    digits = "0123456789" if base == 10 else _HEX
    value, length = 0, 0
    while length < len(text) and text[length] in digits:
        value = value * base + int(text[length], 16)
        length += 1
        if value >= _BIG:
            return None
    return (value, length) if length else None


def parse_ipv4(text: str, sloppy: bool) -> bool:
    rest = text
    for octet in range(4):
        if not rest:
            return False
        if octet:
            if rest[0] != ".":
                return False
            rest = rest[1:]
        number = _leading_number(rest, 10)
        if number is None or number[0] > 0xFF:
            return False
        if not sloppy and number[1] > 1 and rest[0] == "0":
            return False
        rest = rest[number[1] :]
    return not rest


def parse_ipv6(text: str, sloppy: bool) -> bool:
    rest, groups, ellipsis = text, 0, False  # groups: 16-bit groups parsed
    if rest.startswith("::"):
        ellipsis, rest = True, rest[2:]
        if not rest:
            return True
    while groups < 8:
        number = _leading_number(rest, 16)
        if number is None or number[0] > 0xFFFF:
            return False
        if number[1] < len(rest) and rest[number[1]] == ".":
            # a trailing IPv4 address fills the last two groups
            if (not ellipsis and groups != 6) or groups + 2 > 8 or not parse_ipv4(rest, sloppy):
                return False
            rest, groups = "", groups + 2
            break
        groups += 1
        rest = rest[number[1] :]
        if not rest:
            break
        if rest[0] != ":" or len(rest) == 1:
            return False
        rest = rest[1:]
        if rest[0] == ":":
            if ellipsis:
                return False
            ellipsis, rest = True, rest[1:]
            if not rest:
                break
    if rest:
        return False
    # an ellipsis stands for at least one group of zeros
    return ellipsis if groups < 8 else not ellipsis


def parse_ip(text: str, sloppy: bool) -> bool:
    """net.ParseIP: the first `.` or `:` decides which family is read."""
    for char in text:
        if char == ".":
            return parse_ipv4(text, sloppy)
        if char == ":":
            return parse_ipv6(text, sloppy)
    return False


def parse_cidr(text: str, sloppy: bool) -> bool:
    address, slash, mask = text.partition("/")
    if not slash:
        return False
    bits = 32 if parse_ipv4(address, sloppy) else 128 if parse_ipv6(address, sloppy) else 0
    length = _leading_number(mask, 10)
    return bool(bits) and length is not None and length[1] == len(mask) and length[0] <= bits


def _hex_pair(data: bytes, separator: int | None) -> bool:
    if len(data) > 2 and data[2] != separator:
        return False
    return len(data) >= 2 and all(chr(b) in _HEX for b in data[:2])


def parse_mac(text: str) -> bool:
    """net.ParseMAC: 6, 8 or 20 octets, as `01:23:..`, `01-23-..` or `0123.4567...`."""
    data = text.encode()
    if len(data) < 14:
        return False
    if data[2] in b":-":
        count, rem = divmod(len(data) + 1, 3)
        if rem or count not in (6, 8, 20):
            return False
        return all(_hex_pair(data[i * 3 :], data[2]) for i in range(count))
    if data[4] == ord("."):
        groups, rem = divmod(len(data) + 1, 5)
        if rem or 2 * groups not in (6, 8, 20):
            return False
        return all(
            _hex_pair(data[i * 5 : i * 5 + 2], None) and _hex_pair(data[i * 5 + 2 :], data[4])
            for i in range(groups)
        )
    return False


# --- net/url -----------------------------------------------------------------------------------

_HOST_PUNCTUATION = set("!$&'()*+,;=:[]<>\"-_.~")
_USERINFO_PUNCTUATION = set("-._:~!$&'()*+,;=%@")


def _unescape(text: str, host: bool) -> bool:
    """net/url's unescape: `%` must start two hex digits; a host takes few ASCII characters."""
    i = 0
    while i < len(text):
        char = text[i]
        if char == "%":
            if i + 2 >= len(text) or text[i + 1] not in _HEX or text[i + 2] not in _HEX:
                return False
            # in a host, %-encoding is for non-ASCII bytes only (and `%25`, the zone's `%`)
            if host and int(text[i + 1], 16) < 8 and text[i : i + 3] != "%25":
                return False
            i += 3
            continue
        if host and ord(char) < 0x80 and not (char.isalnum() or char in _HOST_PUNCTUATION):
            return False
        i += 1
    return True


def _valid_optional_port(port: str) -> bool:
    return not port or (port[0] == ":" and all("0" <= c <= "9" for c in port[1:]))


def _parse_host(host: str) -> bool:
    if host.startswith("["):
        end = host.rfind("]")
        if end < 0 or not _valid_optional_port(host[end + 1 :]):
            return False
    elif ":" in host and not _valid_optional_port(host[host.rfind(":") :]):
        return False
    return _unescape(host, host=True)


def _parse_authority(authority: str) -> bool:
    at = authority.rfind("@")
    if not _parse_host(authority[at + 1 :]):
        return False
    if at < 0:
        return True
    userinfo = authority[:at]
    if not all(c.isascii() and (c.isalnum() or c in _USERINFO_PUNCTUATION) for c in userinfo):
        return False
    return all(_unescape(part, host=False) for part in userinfo.split(":", 1))


def _scheme_and_rest(text: str) -> tuple[str, str] | None:
    for i, char in enumerate(text):
        if char.isascii() and char.isalpha():
            continue
        if char.isascii() and (char.isdigit() or char in "+-."):
            if i == 0:
                return "", text
            continue
        if char == ":":
            return None if i == 0 else (text[:i], text[i + 1 :])
        return "", text
    return "", text


def parse_request_uri(text: str) -> bool:
    """url.ParseRequestURI: an absolute URI or an absolute path (no fragment splitting)."""
    if not text or any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        return False
    if text == "*":
        return True
    split = _scheme_and_rest(text)
    if split is None:
        return False
    scheme, rest = split
    # a lone `?` at the end forces an empty query; otherwise the query starts at the first
    rest = rest[:-1] if rest.endswith("?") and rest.count("?") == 1 else rest.partition("?")[0]
    if not rest.startswith("/"):
        return bool(scheme)  # `mailto:x` is opaque; a relative path is not a request URI
    if scheme and rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        if not _parse_authority(authority):
            return False
        rest = slash + path
    return _unescape(rest, host=False)


# --- net/mail ----------------------------------------------------------------------------------

_SPECIALS = set('()<>[]:;@\\,"')


def _is_vchar(char: str) -> bool:
    return "!" <= char <= "~" or ord(char) >= 0x80


def _is_atext(char: str, dot: bool) -> bool:
    if char == ".":
        return dot
    return char not in _SPECIALS and _is_vchar(char)


class _MailParser:
    def __init__(self, text: str) -> None:
        self.s = text

    def skip_space(self) -> None:
        self.s = self.s.lstrip(" \t")

    def consume(self, char: str) -> bool:
        if self.s.startswith(char):
            self.s = self.s[1:]
            return True
        return False

    def atom(self, permissive: bool) -> str | None:
        length = 0
        while length < len(self.s) and _is_atext(self.s[length], True):
            length += 1
        atom, self.s = self.s[:length], self.s[length:]
        if not atom:
            return None
        if not permissive and (atom.startswith(".") or ".." in atom or atom.endswith(".")):
            return None
        return atom

    def quoted_string(self) -> str | None:
        i, escaped, text = 1, False, []
        while True:
            if i >= len(self.s):
                return None
            char = self.s[i]
            if escaped:
                if not (_is_vchar(char) or char in " \t"):
                    return None
                text.append(char)
                escaped = False
            elif char == '"':
                break
            elif char == "\\":
                escaped = True
            elif _is_vchar(char) or char in " \t":
                text.append(char)
            else:
                return None
            i += 1
        self.s = self.s[i + 1 :]
        return "".join(text)

    def addr_spec(self) -> bool:
        saved = self.s
        self.skip_space()
        local = (self.quoted_string() or None) if self.s.startswith('"') else self.atom(False)
        ok = local is not None and self.consume("@")
        if ok:
            self.skip_space()
            ok = self.atom(False) is not None
        if not ok:
            self.s = saved
        return ok

    def skip_comment(self) -> bool:
        depth = 1
        while self.s and depth:
            if self.s[0] == "\\" and len(self.s) > 1:
                self.s = self.s[1:]
            elif self.s[0] == "(":
                depth += 1
            elif self.s[0] == ")":
                depth -= 1
            self.s = self.s[1:]
        return depth == 0

    def skip_cfws(self) -> bool:
        self.skip_space()
        while self.consume("("):
            if not self.skip_comment():
                return False
            self.skip_space()
        return True

    def phrase(self) -> bool:
        words = 0
        while True:
            if words and not self.skip_cfws():
                return False
            self.skip_space()
            if not self.s:
                break
            word = self.quoted_string() if self.s.startswith('"') else self.atom(True)
            if word is None:
                break
            words += 1
        return words > 0

    def address(self) -> bool:
        self.skip_space()
        if not self.s:
            return False
        if self.addr_spec():
            self.skip_space()
            if self.s.startswith("("):
                self.s = self.s[1:]
                return self.skip_comment()
            return True
        if not self.s.startswith("<") and not self.phrase():
            return False
        self.skip_space()
        return self.consume("<") and self.addr_spec() and self.consume(">")


def parse_mail_address(text: str) -> bool:
    """mail.ParseAddress: `a@b.c`, `"a b"@c`, `Name <a@b>` (no groups, no domain literals)."""
    parser = _MailParser(text)
    return parser.address() and parser.skip_cfws() and not parser.s


# --- time --------------------------------------------------------------------------------------

_UNITS_NS = {
    "ns": 1,
    "us": 10**3,
    "\u00b5s": 10**3,
    "\u03bcs": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3600 * 10**9,
}
_MAX_DURATION = 2**63 - 1


def parse_go_duration(text: str) -> bool:
    """time.ParseDuration: `1h30m`, `-1.5s`, `0`; units ns, us, µs, ms, s, m, h."""
    rest, negative = text, False
    if rest[:1] in ("-", "+"):
        negative, rest = rest[0] == "-", rest[1:]
    if rest == "0":
        return True
    if not rest:
        return False
    total = 0
    while rest:
        if not (rest[0] == "." or "0" <= rest[0] <= "9"):
            return False
        whole_end = len(rest) - len(rest.lstrip("0123456789"))
        whole, rest = rest[:whole_end], rest[whole_end:]
        fraction = ""
        if rest.startswith("."):
            rest = rest[1:]
            fraction_end = len(rest) - len(rest.lstrip("0123456789"))
            fraction, rest = rest[:fraction_end], rest[fraction_end:]
            if not whole and not fraction:
                return False
        unit_end = next((i for i, c in enumerate(rest) if c == "." or "0" <= c <= "9"), len(rest))
        unit, rest = rest[:unit_end], rest[unit_end:]
        whole = whole.lstrip("0")
        if unit not in _UNITS_NS or len(whole) > 19:  # more than 2**63 either way
            return False
        scale = _UNITS_NS[unit]
        total += int(whole or "0") * scale
        fraction = fraction[:18]  # Go drops the digits that no longer change the result
        if fraction:
            total += int(fraction) * scale // 10 ** len(fraction)
        if total > _MAX_DURATION + (1 if negative else 0):
            return False
    return True


_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def parse_full_date(text: str) -> bool:
    """time.Parse("2006-01-02", text): month and day of two digits, the day within its month."""
    if len(text) != 10 or text[4] != "-" or text[7] != "-":
        return False
    year_text, month_text, day_text = text[:4], text[5:7], text[8:10]
    if not all(c in "0123456789" for c in year_text + month_text + day_text):
        return False
    year, month, day = int(year_text), int(month_text), int(day_text)
    if not 1 <= month <= 12:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return 1 <= day <= _DAYS_IN_MONTH[month - 1] + (1 if month == 2 and leap else 0)
