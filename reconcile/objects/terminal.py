"""Free text made safe for a terminal: a commit subject, a hook's stderr or an API error may
carry escape sequences (`ESC ]` to retitle a window or forge a hyperlink, `ESC [2J` to clear
the screen, a carriage return to overwrite a line, bidirectional overrides to reorder what is
shown). They are written out visibly instead (`\\x1b`), so the text reads as what it is."""

from __future__ import annotations

import re

# C0 and C1 controls but tab and newline, DEL, and the Unicode bidirectional controls.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """`text` with every control character but tab and newline written as its escape."""
    if text.isprintable():
        return text
    return _CONTROLS.sub(_escape, text)


def one_line(text: str) -> str:
    """`text` as one line: `printable`, with newlines and tabs written as escapes too (a key
    or a name from input, shown inside a line that must not become several)."""
    text = printable(text)
    if "\n" in text or "\t" in text:
        text = text.replace("\n", "\\n").replace("\t", "\\t")
    return text


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
