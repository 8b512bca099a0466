"""What is not ours, written into Markdown for GitHub (a step summary, a pull-request comment)
so that it reads as what it is and changes nothing around it.

Names, values, keys, paths, errors and labels come from files a pull request controls. Each
context has its function:

- `inline`: a paragraph, a list item or a table cell. Markdown's and HTML's syntax is escaped
  (no emphasis, link, image, table cell, code span, math or tag of its own), line breaks are
  `<br>`.
- `html_text`: inside an HTML block (a `<summary>`), where Markdown is not read: HTML-escaped,
  on one line (a blank line would end the block).
- `code_span`: an inline code span, whatever backticks the text holds.
- `fence_line` and `fence_for`: a line of a fenced code block, and a fence no line closes.

In every context, control and invisible characters (C0 and C1 controls, the bidirectional
overrides and isolates, zero-width characters, line and paragraph separators, lone surrogates)
are written as escapes (`\\u202e`), as the text report writes them; and outside code, what
GitHub would turn into a notification or a link (`@user`, `@org/team`, `#12`, `GH-12`,
`https://...`, `www.`) gets a zero-width space after its first character, so it pings nobody
and links nowhere while reading the same. Sizes are counted as GitHub counts a comment's
characters: UTF-16 code units."""

from __future__ import annotations

import re
import unicodedata

from reconcile.objects.lazy_pattern import on_first_use

ZERO_WIDTH_SPACE = "\u200b"  # ours: never in what `visible` returns

# Unicode categories shown as escapes: controls, format characters (bidi, zero-width, soft
# hyphen, tags), surrogates, line and paragraph separators.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})

# What GitHub links or notifies on in rendered text (outside code).
_ACTIVE = on_first_use(
    r"(?<=@)(?=[A-Za-z0-9_])"  # @user, @org/team, an e-mail address
    r"|(?<=#)(?=[0-9])"  # #12, owner/repo#12
    r"|(?<=G)(?=H-[0-9])"  # GH-12
    r"|(?<=[A-Za-z]:)(?=//)"  # https://, ftp://
    r"|(?<=www)(?=\.)",  # www.example.com
    re.IGNORECASE,
)
# What opens emphasis, a link or an image, a code span, a table cell, strikethrough, a heading
# or math anywhere in a line (CommonMark lets any ASCII punctuation be escaped with `\`); `<`
# and `&` (a tag, an autolink, an entity) are HTML-escaped instead.
_MARKDOWN_SPECIAL = on_first_use(r"([\\`*_\[\]|~#$])")
# At the start of a list item's text: what would open a list of its own.
_LINE_START = on_first_use(r"^(\s*)(?:([-+])|([0-9]+)([.)]))")


def visible(text: str, *, keep: str = "") -> str:
    """`text` with every control and invisible character but those in `keep` written as its
    escape (`\\x1b`, `\\u202e`, `\\U000e0041`)."""
    if text.isprintable():  # none of the hidden categories is printable
        return text
    return "".join(
        _escape(char)
        if char not in keep and unicodedata.category(char) in _HIDDEN_CATEGORIES
        else char
        for char in text
    )


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def defused(text: str) -> str:
    """`text` with a zero-width space where GitHub would otherwise mention, reference or link."""
    return _ACTIVE().sub(ZERO_WIDTH_SPACE, text)


def inline(text: str, limit: int | None = None) -> str:
    """Free text as literal Markdown: a paragraph's, a list item's or a table cell's (its
    visible form cut to `limit` characters)."""
    shown = _limited(visible(text, keep="\n"), limit)
    import html  # imported here: the text report uses this module for `cut` and `size` only

    escaped = _MARKDOWN_SPECIAL().sub(r"\\\1", html.escape(shown, quote=False))
    escaped = _LINE_START().sub(_escape_line_start, escaped)
    return defused(escaped).replace("\n", "<br>")


def _escape_line_start(match: re.Match[str]) -> str:
    space, sign, number, dot = match.groups()
    return f"{space}\\{sign}" if sign else f"{space}{number}\\{dot}"


def html_text(text: str, limit: int | None = None) -> str:
    """Free text inside an HTML block (where Markdown is not read), on one line (its visible
    form cut to `limit` characters)."""
    import html

    return defused(html.escape(_limited(visible(text), limit)))


def code_span(text: str, limit: int | None = None) -> str:
    """`text` as an inline code span: delimited by more backticks than it holds in a row (its
    visible form cut to `limit` characters)."""
    shown = _limited(visible(text), limit)
    longest = max((len(run) for run in re.findall(r"`+", shown)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if shown.startswith(("`", " ")) or shown.endswith(("`", " ")) or not shown else ""
    return f"{ticks}{pad}{shown}{pad}{ticks}"


def _limited(shown: str, limit: int | None) -> str:
    return shown if limit is None else cut(shown, limit)


def fence_line(text: str) -> str:
    """One line of a fenced code block (tabs kept; a line break in it written as `\\x0a`)."""
    return visible(text, keep="\t")


def fence_for(lines: list[str]) -> str:
    """A backtick fence longer than any run of backticks in `lines`."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    return "`" * max(3, longest + 1)


def size(text: str) -> int:
    """Characters as GitHub counts them: UTF-16 code units."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", errors="surrogatepass")) // 2


def cut(text: str, limit: int) -> str:
    """`text` within `limit` characters: past it, its start and how much was cut."""
    if len(text) <= limit:
        return text
    kept = max(0, limit - 40)
    return f"{text[:kept]} … ({len(text) - kept:,} more characters not shown)"
