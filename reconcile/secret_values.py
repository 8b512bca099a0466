"""Secret values this process has seen, scrubbed from every piece of free text that leaves it.

Reports redact Secrets structurally (by kind). Free text cannot be parsed that way: a command
hook's stderr tail, a webhook's error body, an API server message quoting a value. So every
Secret the run sees (listed from the cluster, returned by a hook, even in output that failed to
parse) has its values remembered here, and `scrub` replaces them wherever they appear, together
with `redact_text`'s structural pass. Logs, reports, Events and error messages all go through
`scrub` on their way out.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import threading
from typing import Any

from reconcile.objects.bounds import MAX_DEPTH
from reconcile.objects.redact import REDACTED, SECRET_FIELDS, redact_text
from reconcile.objects.secrets import is_secret

#: Shorter values are not scrubbed from free text: replacing every `on` or `42` in a message
#: would garble it while hiding little.
MIN_LENGTH = 4


class SecretValues:
    """A thread-safe set of secret strings, in every form they can appear in text: as given,
    base64-encoded (`data`), and decoded (`stringData`, or a hook printing the plain value)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None

    def remember(self, value: Any) -> None:
        """Remember the values of every core v1 Secret in `value` (an object, a List, a hook
        request or response: found at any depth)."""
        found: set[str] = set()
        _collect(value, found, depth=0)
        forms = {form for v in found for form in _forms(v) if len(form) >= MIN_LENGTH}
        if not forms:
            return
        with self._lock:
            if forms <= self._values:
                return
            self._values |= forms
            self._pattern = None

    def remember_credential(self, value: str) -> None:
        """Remember a credential that is not in a Secret object (a git token, a password in
        a URL), in every form it can appear in text."""
        forms = {form for form in _forms(value) if len(form) >= MIN_LENGTH}
        with self._lock:
            if forms and not forms <= self._values:
                self._values |= forms
                self._pattern = None

    def knows(self, text: str) -> bool:
        """Whether `text` holds a value remembered here."""
        pattern = self._compiled()
        return pattern is not None and pattern.search(text) is not None

    def scrub(self, text: str) -> str:
        """`text` with every remembered value, and every JSON `data` / `stringData` map's
        values, replaced by `<redacted>`."""
        text = redact_text(text)
        pattern = self._compiled()
        return pattern.sub(REDACTED, text) if pattern is not None else text

    def scrub_known(self, value: Any) -> Any:
        """`value` (an object's field: a string, or maps and lists of them, keys included)
        with every remembered value in its strings replaced by `<redacted>`: a Secret's value
        copied into an annotation or a ConfigMap is still a Secret's value."""
        pattern = self._compiled()
        if pattern is None:
            return value
        return _scrubbed(value, pattern)

    def scrub_cut(self, text: str, *, cut_start: bool = False, cut_end: bool = False) -> str:
        """`scrub` for a piece cut out of a longer text (a stderr tail, a body's start): a
        value the cut split in two is not whole in the piece, so a piece that starts with the
        end of a value (or ends with its start) loses that part too."""
        text = self.scrub(text)
        if not (cut_start or cut_end):
            return text
        with self._lock:
            values = sorted(self._values, key=len, reverse=True)
        if cut_start:
            text = text.lstrip("\ufffd")  # a character the cut split
            for value in values:
                cut = _overlap(value, text, at_start=True)
                if cut:
                    text = REDACTED + text[cut:]
                    break
        if cut_end:
            text = text.rstrip("\ufffd")
            for value in values:
                cut = _overlap(value, text, at_start=False)
                if cut:
                    text = text[: len(text) - cut] + REDACTED
                    break
        return text

    def forget_all(self) -> None:
        with self._lock:
            self._values.clear()
            self._pattern = None

    def _compiled(self) -> re.Pattern[str] | None:
        with self._lock:
            if self._pattern is None and self._values:
                # Longest first, so a value is never left half-replaced by a shorter one.
                ordered = sorted(self._values, key=len, reverse=True)
                self._pattern = re.compile("|".join(re.escape(v) for v in ordered))
            return self._pattern


#: The shortest piece of a value a cut may leave that is scrubbed: shorter ones cannot be told
#: from ordinary text.
MIN_PIECE = 4


def _overlap(value: str, text: str, *, at_start: bool) -> int:
    """How many characters at the start (end) of `text` are the end (start) of `value`, but
    not all of it (a whole value is scrubbed already); 0 when fewer than MIN_PIECE."""
    for size in range(min(len(value) - 1, len(text)), MIN_PIECE - 1, -1):
        if at_start and text.startswith(value[-size:]):
            return size
        if not at_start and text.endswith(value[:size]):
            return size
    return 0


def _collect(value: Any, found: set[str], depth: int) -> None:
    # as deep as an input may nest (a hook's answer is walked before its depth is checked):
    # deeper is hostile, and refused
    if depth > MAX_DEPTH:
        return
    if isinstance(value, dict):
        if is_secret(value):
            for field in SECRET_FIELDS:
                entries = value.get(field)
                if isinstance(entries, dict):
                    found.update(str(v) for v in entries.values() if v is not None)
        for item in value.values():
            _collect(item, found, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _collect(item, found, depth + 1)


def _forms(value: str) -> set[str]:
    """The value, base64-encoded, decoded when it is base64 (and its lines), and each of those
    as it appears inside a JSON string, once or twice escaped (a hook's JSON quoted in an
    error, quoted in a JSON report)."""
    forms = {value, base64.b64encode(value.encode()).decode()}
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        decoded = None
    if decoded is not None:
        forms.add(decoded)
        forms.update(line for line in decoded.splitlines() if line.strip())
    for form in list(forms):
        for ascii_only in (True, False):
            once = json.dumps(form, ensure_ascii=ascii_only)[1:-1]
            forms.add(once)
            forms.add(json.dumps(once, ensure_ascii=ascii_only)[1:-1])
            # JSON may also write `/` as `\/` (PHP's encoder does, by default)
            slashed = once.replace("/", "\\/")
            forms.add(slashed)
            forms.add(json.dumps(slashed, ensure_ascii=ascii_only)[1:-1])
    return forms


def _scrubbed(value: Any, pattern: re.Pattern[str]) -> Any:
    if isinstance(value, str):
        return pattern.sub(REDACTED, value)
    if isinstance(value, dict):
        return {_scrubbed(k, pattern): _scrubbed(v, pattern) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v, pattern) for v in value]
    return value


#: The process's registry: a run is one process, and every part of it reports through here.
SEEN = SecretValues()


def remember_secrets(value: Any) -> None:
    SEEN.remember(value)


def knows_secret_in(text: str) -> bool:
    """Whether `text` holds a remembered value, in any of its forms."""
    return SEEN.knows(text)


def remember_credential(value: str) -> None:
    SEEN.remember_credential(value)


def scrub(text: str) -> str:
    return SEEN.scrub(text)


def scrub_known(value: Any) -> Any:
    return SEEN.scrub_known(value)


def scrub_cut(text: str, *, cut_start: bool = False, cut_end: bool = False) -> str:
    return SEEN.scrub_cut(text, cut_start=cut_start, cut_end=cut_end)
