"""`reconcile diff`'s Markdown: made for a pull-request comment, collapsible per controller and
per object, within the comment's size.

Every object gets a place, in order: first every object's name (its summary line), then, in
order, the whole diff of each object that fits in what is left. A large object is cut (each
line at most LINE_CHARS, the whole at most OBJECT_CHARS, shared between its parts by
`fit_lines`, so that long annotations cannot hide a role after them); only when not even its
name fits is an object left out. A note says how many were shown in part, named only or left
out, and what kinds those left out are.
Each error of the head is cut on its own (at most ERROR_CHARS), and at most ERRORS_SHOWN are
listed. What comes from the compared files (names, keys, values, paths, errors, labels) is
written with `markdown_text`: controls and bidirectional characters visible, no Markdown or
HTML of its own, no mention or link. Sizes are GitHub's: UTF-16 code units."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from reconcile.records import dataclass
from reconcile.report.fit_lines import fit
from reconcile.report.markdown_text import (
    code_span,
    cut,
    fence_for,
    fence_line,
    html_text,
    inline,
    size,
    visible,
)
from reconcile.report.model import plural
from reconcile.report.state_diff import Comparison, ObjectChange, ObjectDiff
from reconcile.report.state_diff_render import (
    SIGN,
    by_group,
    change_lines,
    group_title,
    side_label,
    summary,
)
from reconcile.secret_values import scrub

COMMENT_LIMIT = 65_536  # characters: GitHub refuses a longer comment
# The comment's own lines around the report (github-actions/comment.py: its marker and the line
# naming the run), so that the report is never cut again there.
WRAPPER_RESERVE = 1_024
OBJECT_CHARS = 12_000  # of one object's diff
LINE_CHARS = 2_000  # of one line of it
ERROR_CHARS = 2_000  # of one error
ERRORS_SHOWN = 20
NAME_CHARS = 300  # of a title, a path or a label
FIELDS_NAMED = 3  # changed fields named in an object's summary
KINDS_NAMED = 12  # kinds of the objects left out named in the note
_NOTE_RESERVE = 6_000  # kept free for the note saying what was cut


@dataclass
class _Place:
    """An object's place in the comment: its whole block, and its name alone."""

    entry: ObjectDiff
    block: str
    partial: bool
    named: str
    chosen: str = ""


def render_markdown(comparison: Comparison, *, limit: int = COMMENT_LIMIT) -> str:
    """Within `limit` characters (less what a comment adds around it)."""
    head = _head(comparison)
    room = limit - WRAPPER_RESERVE - _NOTE_RESERVE - size(head)
    groups = []
    for group, entries in by_group(comparison):
        title = f"<b>{html_text(group_title(group), NAME_CHARS)}</b>: {_counts(entries)}"
        opening, closing = f"<details open><summary>{title}</summary>\n", "\n</details>\n"
        room -= size(opening) + size(closing)
        groups.append((opening, [_place(entry) for entry in entries], closing))
    places = [place for _, group_places, _ in groups for place in group_places]
    _choose(places, room)
    body = [
        opening + "".join(p.chosen for p in group_places) + closing
        for opening, group_places, closing in groups
        if any(p.chosen for p in group_places)
    ]
    return head + "".join(body) + _note(places, limit)


def _place(entry: ObjectDiff) -> _Place:
    block, partial, lines = _object_block(entry)
    return _Place(entry, block, partial, _named_block(entry, lines))


def _choose(places: list[_Place], room: int) -> None:
    """Every object named first, when all names fit; then, in order, each object whose whole
    block fits in what is left: a large object takes its room without hiding the next ones."""
    for place in places:  # in order, as many names as fit
        if size(place.named) > room:
            break
        place.chosen = place.named
        room -= size(place.named)
    for place in places:
        if not place.chosen:
            break
        extra = size(place.block) - size(place.named)
        if extra <= room:
            place.chosen = place.block
            room -= extra


def _note(places: list[_Place], limit: int) -> str:
    whole = sum(1 for p in places if p.chosen == p.block and not p.partial)
    counts = (
        (sum(1 for p in places if p.chosen == p.block and p.partial), "shown in part"),
        (sum(1 for p in places if p.chosen == p.named), "named only"),
        (sum(1 for p in places if not p.chosen), "left out"),
    )
    if whole == len(places):
        return ""
    parts = ", ".join(f"{n} {what}" for n, what in counts if n)
    return (
        f"\n**{len(places) - whole} of {len(places)} objects are not shown in full** here "
        f"({parts}): a comment holds at most {limit:,} characters. `reconcile diff` on your "
        f"machine, or its JSON report, shows them all.{_left_out(places)}\n"
    )


def _left_out(places: list[_Place]) -> str:
    """What the objects not even named are, by change and kind (most first, at most
    KINDS_NAMED): a reviewer knows what to look for elsewhere."""
    kinds = Counter(
        f"{p.entry.change.value} {p.entry.kind}" for p in places if not p.chosen
    ).most_common()
    if not kinds:
        return ""
    named = ", ".join(f"{n} {inline(what, NAME_CHARS)}" for what, n in kinds[:KINDS_NAMED])
    more = f" and {len(kinds) - KINDS_NAMED} more kinds" if len(kinds) > KINDS_NAMED else ""
    return f" Left out: {named}{more}."


def _counts(entries: list[ObjectDiff]) -> str:
    return ", ".join(
        f"{n} {c.value}" for c in ObjectChange if (n := sum(1 for e in entries if e.change is c))
    )


def _head(comparison: Comparison) -> str:
    diff = comparison.diff
    title = "no change" if not diff.objects else summary(comparison).split(" (")[0]
    base, head = (code_span(side_label(s), NAME_CHARS) for s in (comparison.base, comparison.head))
    lines = [
        f"### reconcile diff: {title}",
        "",
        f"Base {base} → head {head}: "
        + ", ".join(f"{diff.count(c)} {c.value}" for c in ObjectChange)
        + f" ({diff.compared} objects compared"
        + ("" if comparison.include_status else ", status not compared")
        + ").",
        "",
    ]
    errors = comparison.all_errors
    if errors:
        lines += [f"**{plural(len(errors), 'error')}: the comparison is incomplete.**", ""]
        lines += [f"- {_within(inline, scrub(e), ERROR_CHARS)}" for e in errors[:ERRORS_SHOWN]]
        if len(errors) > ERRORS_SHOWN:
            lines.append(
                f"- … and {len(errors) - ERRORS_SHOWN} more (the JSON report and the job's log "
                "have them all)"
            )
        lines.append("")
    return "\n".join(lines) + "\n"


def _within(render: Callable[[str], str], text: str, limit: int) -> str:
    """`render(text)`, the text cut until what it renders is at most `limit` characters
    (escapes make the rendering longer than the text)."""
    shown = visible(text, keep="\n")
    keep = limit
    while True:
        out = render(cut(shown, keep))
        if size(out) <= limit or keep <= 80:
            return out
        keep = max(80, keep * limit // size(out) - 40)


def _summary(entry: ObjectDiff, note: str = "") -> str:
    fields = ""
    if entry.change is ObjectChange.CHANGED:
        names = [c.dotted for c in entry.changes]
        shown = ", ".join(f"<code>{html_text(n, NAME_CHARS)}</code>" for n in names[:FIELDS_NAMED])
        more = len(names) - FIELDS_NAMED
        fields = f": {shown}" + (f" and {more} more" if more > 0 else "")
    title = html_text(entry.title, NAME_CHARS)
    return f"<summary>{SIGN[entry.change]} {title} {entry.change.value}{fields}{note}</summary>"


def _object_block(entry: ObjectDiff) -> tuple[str, bool, int]:
    """The object's `<details>` block, whether it had to be cut, and its number of lines: each
    line at most LINE_CHARS, the whole at most OBJECT_CHARS, shared between its parts
    (`fit_lines`) so that no part hides another."""
    all_lines = [fence_line(f"{sign} {text}") for sign, text in change_lines(entry)]
    long_lines = any(len(line) > LINE_CHARS for line in all_lines)
    lines, partial = fit([cut(line, LINE_CHARS) for line in all_lines], OBJECT_CHARS)
    fence = fence_for(lines)
    note = " <i>(shown in part)</i>" if partial or long_lines else ""
    return (
        f"<details>{_summary(entry, note)}\n\n{fence}diff\n"
        + "\n".join(lines)
        + f"\n{fence}\n</details>\n",
        bool(note),
        len(all_lines),
    )


def _named_block(entry: ObjectDiff, lines: int) -> str:
    note = f" <i>(not shown: {plural(lines, 'line')})</i>"
    return f"<details>{_summary(entry, note)}</details>\n"
