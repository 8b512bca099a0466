"""What a Markdown report or comment makes of what it quotes, read as a CommonMark parser reads
it (markdown-it-py, which GitHub's cmark-gfm agrees with on blocks, code and HTML): which HTML
tags it holds, its code blocks, links, and the text a reader sees outside code, where GitHub
would turn `@user` into a notification and `#12` or a URL into a link."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from markdown_it import MarkdownIt

# The HTML the reports write themselves; anything else came from the data.
OUR_TAGS = frozenset(
    {"details", "/details", "summary", "/summary", "b", "/b", "code", "/code", "i", "/i", "br",
     "sub", "/sub", "!--"}
)  # fmt: skip
# Characters that reorder or hide text, and terminal controls: never raw in a report.
HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]"
)
# What GitHub would mention, reference or link in text outside code.
ACTIVE = re.compile(r"@[A-Za-z0-9_]|#[0-9]|\bGH-[0-9]|[A-Za-z]://|\bwww\.", re.IGNORECASE)
_TAG = re.compile(r"<\s*(/?[A-Za-z!][A-Za-z0-9-]*)")
_CODE = re.compile(r"<code>.*?</code>", re.DOTALL)


@dataclass(frozen=True)
class Block:
    """A fenced code block as a reader meets it: its language (the info string's first word),
    its content, the line it starts on (1-based), and the HTML comment right before it, which
    the documentation's checks read (`<!-- check: ... -->`; "" when there is none)."""

    language: str
    content: str
    line: int
    comment: str


@dataclass
class Reading:
    tags: set[str] = field(default_factory=set)  # HTML tags, `/x` for closing ones
    fences: list[str] = field(default_factory=list)  # each fenced block's content
    links: list[str] = field(default_factory=list)
    prose: list[str] = field(default_factory=list)  # text outside code, as a reader sees it
    blocks: list[Block] = field(default_factory=list)  # the fenced blocks, with their comment


def read(markdown: str) -> Reading:
    parser = MarkdownIt("commonmark").enable("table").enable("strikethrough")
    out = Reading()
    tokens = parser.parse(markdown)
    for i, token in enumerate(tokens):
        _take(token, out)
        if token.type == "fence":
            before = tokens[i - 1] if i else None
            comment = before.content.strip() if before and before.type == "html_block" else ""
            language = (token.info.split() or [""])[0]
            line = token.map[0] + 1 if token.map else 0
            out.blocks.append(Block(language, token.content, line, comment))
    return out


def _take(token: object, out: Reading) -> None:
    kind = getattr(token, "type", "")
    content = getattr(token, "content", "")
    if kind in {"fence", "code_block"}:
        out.fences.append(content)
    elif kind in ("html_block", "html_inline"):
        out.tags.update(t.lower() for t in _TAG.findall(content))
        # what an HTML block shows outside <code>: GitHub mentions and links there too
        out.prose.append(html.unescape(re.sub(r"<[^>]*>", " ", _CODE.sub(" ", content))))
    elif kind in ("link_open", "image"):
        attrs = getattr(token, "attrs", {}) or {}
        out.links.append(str(attrs.get("href") or attrs.get("src") or ""))
    elif kind == "text":
        out.prose.append(content)
    for child in getattr(token, "children", None) or []:
        _take(child, out)


def assert_inert(markdown: str) -> Reading:
    """Nothing quoted changed the report's structure: no tag but the report's own, no link, no
    hidden character anywhere, nothing GitHub would notify or link on outside code; and the
    `<details>` blocks balanced."""
    found = HIDDEN.search(markdown.replace("\u200b", ""))
    assert found is None, f"a raw {found.group()!r} in the report" if found else ""
    reading = read(markdown)
    assert reading.tags <= OUR_TAGS, reading.tags - OUR_TAGS
    assert reading.links == [], reading.links
    for text in reading.prose:
        active = ACTIVE.search(text)
        assert active is None, f"{active.group()!r} in {text[:200]!r}" if active else ""
    opened = len(re.findall(r"<details\b", markdown)) - sum(
        f.count("<details") for f in reading.fences
    )
    closed = markdown.count("</details>") - sum(f.count("</details>") for f in reading.fences)
    assert opened == closed, (opened, closed)
    return reading
