"""`reconcile diff`'s report as text, Markdown (collapsible per controller and object, within
a pull-request comment's size) and JSON. Every free text and value is scrubbed of known
secret values; Secrets' values are already redacted by the comparison."""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from typing import Any

from reconcile.objects.terminal import printable
from reconcile.report.diff import ChangeOp, to_yaml, yaml_lines
from reconcile.report.model import plural
from reconcile.report.state_diff import (
    MANIFESTS_GROUP,
    Comparison,
    FieldChange,
    ObjectChange,
    ObjectDiff,
    Side,
)
from reconcile.secret_values import scrub

DIFF_SCHEMA_VERSION = "reconcile.diff/v1"
COMMENT_LIMIT = 65_536  # characters: GitHub refuses a longer comment
_NOTE_RESERVE = 600  # kept free for the note saying what was cut
_SIGN = {ObjectChange.CREATED: "+", ObjectChange.DELETED: "-", ObjectChange.CHANGED: "~"}


def exit_status(comparison: Comparison) -> int:
    """0 the same, 2 different, 1 the comparison is not to be trusted (errors)."""
    if comparison.all_errors:
        return 1
    return 2 if comparison.diff.objects else 0


# -- shared ---------------------------------------------------------------------------------


def _side(side: Side) -> str:
    return f"{side.label} ({side.commit[:12]})" if side.commit else side.label


def summary(comparison: Comparison) -> str:
    diff = comparison.diff
    n = len(diff.objects)
    counts = ", ".join(f"{diff.count(c)} {c.value}" for c in ObjectChange)
    head = (
        "no object differs"
        if n == 0
        else f"{n} object{'s' if n != 1 else ''} differ{'s' if n == 1 else ''}"
    )
    return f"{head} ({counts}; {diff.compared} compared)"


def _group_title(group: str) -> str:
    return "from the manifests (no controller owns them)" if group == MANIFESTS_GROUP else group


def change_lines(entry: ObjectDiff) -> list[tuple[str, str]]:
    """(sign, text) lines: a created object's content, a deleted object's, or `- old` /
    `+ new` per changed field."""
    if entry.change is ObjectChange.CREATED:
        return [("+", line) for line in to_yaml(_scrubbed(entry.content)).splitlines()]
    if entry.change is ObjectChange.DELETED:
        return [("-", line) for line in to_yaml(_scrubbed(entry.content)).splitlines()]
    out: list[tuple[str, str]] = []
    for change in entry.changes:
        out += _field_lines(change)
    return out


def _field_lines(change: FieldChange) -> list[tuple[str, str]]:
    label = change.dotted
    out: list[tuple[str, str]] = []
    if change.op is not ChangeOp.ADD:
        out += [("-", line) for line in yaml_lines(label, _scrubbed(change.before))]
    if change.op is not ChangeOp.REMOVE:
        out += [("+", line) for line in yaml_lines(label, _scrubbed(change.after))]
    return out


def _scrubbed(value: Any) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {k: _scrubbed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v) for v in value]
    return value


def _by_group(comparison: Comparison) -> Iterator[tuple[str, list[ObjectDiff]]]:
    for group in comparison.diff.groups():
        yield group, [o for o in comparison.diff.objects if o.group == group]


# -- text -----------------------------------------------------------------------------------


def render_text(comparison: Comparison) -> str:
    lines = [
        printable(summary(comparison)),
        printable(f"  base: {_side(comparison.base)}"),
        printable(f"  head: {_side(comparison.head)}"),
    ]
    if not comparison.include_status:
        lines.append("  (status not compared: --status compares it)")
    errors = comparison.all_errors
    if errors:
        lines += [
            "",
            f"{len(errors)} error{'s' if len(errors) != 1 else ''} (the comparison is incomplete):",
        ]
        lines += [f"  {printable(scrub(e))}" for e in errors]
    for group, entries in _by_group(comparison):
        lines += ["", printable(_group_title(group))]
        for entry in entries:
            lines.append(printable(f"  {_SIGN[entry.change]} {entry.title} {entry.change.value}"))
            if entry.change is ObjectChange.CHANGED:
                lines += [printable(f"      {sign} {text}") for sign, text in change_lines(entry)]
    return "\n".join(lines) + "\n"


# -- Markdown -------------------------------------------------------------------------------


def render_markdown(comparison: Comparison, *, limit: int = COMMENT_LIMIT) -> str:
    """Within `limit` characters: past it, objects are left out from the end and a note
    says how many."""
    head = _markdown_head(comparison)
    room = limit - len(head) - _NOTE_RESERVE
    body: list[str] = []
    shown = 0
    total = len(comparison.diff.objects)
    for group, entries in _by_group(comparison):
        title = f"<b>{_html(_group_title(group))}</b>: {_counts(entries)}"
        opening = f"<details open><summary>{title}</summary>\n"
        closing = "\n</details>\n"
        blocks: list[str] = []
        used = len(opening) + len(closing)
        for entry in entries:
            block = _object_block(entry)
            if used + len(block) > room:
                break
            blocks.append(block)
            used += len(block)
        if blocks:
            body.append(opening + "".join(blocks) + closing)
            room -= used
            shown += len(blocks)
        if len(blocks) < len(entries):
            break
    text = head + "".join(body)
    if shown < total:
        text += (
            f"\n**{total - shown} of {total} objects are not shown** here: a comment holds at most "
            f"{limit:,} characters. `reconcile diff` on your machine, or its JSON report, lists "
            "them all.\n"
        )
    return text


def _counts(entries: list[ObjectDiff]) -> str:
    return ", ".join(
        f"{n} {c.value}" for c in ObjectChange if (n := sum(1 for e in entries if e.change is c))
    )


def _markdown_head(comparison: Comparison) -> str:
    diff = comparison.diff
    title = "no change" if not diff.objects else summary(comparison).split(" (")[0]
    lines = [
        f"### reconcile diff: {_html(title)}",
        "",
        f"Base `{_code(_side(comparison.base))}` → head `{_code(_side(comparison.head))}`: "
        + ", ".join(f"{diff.count(c)} {c.value}" for c in ObjectChange)
        + f" ({diff.compared} objects compared"
        + ("" if comparison.include_status else ", status not compared")
        + ").",
        "",
    ]
    errors = comparison.all_errors
    if errors:
        lines += [
            f"**{plural(len(errors), 'error')}: the comparison is incomplete.**",
            "",
        ]
        lines += [f"- {_html(scrub(e))}" for e in errors[:20]]
        if len(errors) > 20:
            lines.append(f"- … and {len(errors) - 20} more (see the job's log)")
        lines.append("")
    return "\n".join(lines) + "\n"


def _object_block(entry: ObjectDiff) -> str:
    fields = ""
    if entry.change is ObjectChange.CHANGED:
        names = [c.dotted for c in entry.changes]
        shown = ", ".join(f"<code>{_html(n)}</code>" for n in names[:3])
        fields = f": {shown}" + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    lines = [f"{sign} {text}" for sign, text in change_lines(entry)]
    fence = _fence(lines)
    return (
        f"<details><summary>{_SIGN[entry.change]} {_html(entry.title)} {entry.change.value}{fields}"
        f"</summary>\n\n{fence}diff\n" + "\n".join(lines) + f"\n{fence}\n</details>\n"
    )


def _html(text: str) -> str:
    return html.escape(printable(text)).replace("\n", " ")


def _code(text: str) -> str:
    return printable(text).replace("`", "'")


def _fence(lines: list[str]) -> str:
    longest = 0
    for line in lines:
        run = 0
        for char in line:
            run = run + 1 if char == "`" else 0
            longest = max(longest, run)
    return "`" * max(3, longest + 1)


# -- JSON -----------------------------------------------------------------------------------


def comparison_dict(comparison: Comparison) -> dict[str, Any]:
    diff = comparison.diff
    return {
        "schemaVersion": DIFF_SCHEMA_VERSION,
        "identical": not diff.objects,
        "base": _side_dict(comparison.base),
        "head": _side_dict(comparison.head),
        "includeStatus": comparison.include_status,
        "counts": {c.value: diff.count(c) for c in ObjectChange} | {"compared": diff.compared},
        "errors": [scrub(e) for e in comparison.all_errors],
        "objects": [_object_dict(o) for o in diff.objects],
    }


def _side_dict(side: Side) -> dict[str, Any]:
    return {
        "label": side.label,
        "commit": side.commit or None,
        "subject": scrub(side.subject) or None,
        "passes": side.passes,
        "converged": side.converged,
        "errors": [scrub(e) for e in side.errors],
    }


def _object_dict(entry: ObjectDiff) -> dict[str, Any]:
    out: dict[str, Any] = {
        "controller": None if entry.group == MANIFESTS_GROUP else entry.group,
        "apiVersion": entry.api_version,
        "kind": entry.kind,
        "namespace": entry.namespace or None,
        "name": entry.name,
        "change": entry.change.value,
    }
    if entry.change is ObjectChange.CHANGED:
        out["fields"] = [
            {
                "path": c.dotted,
                "op": c.op.value,
                **({"before": _scrubbed(c.before)} if c.op is not ChangeOp.ADD else {}),
                **({"after": _scrubbed(c.after)} if c.op is not ChangeOp.REMOVE else {}),
            }
            for c in entry.changes
        ]
    else:
        out["object"] = _scrubbed(entry.content)
    return out


def render_json(comparison: Comparison) -> str:
    return json.dumps(comparison_dict(comparison), indent=2, ensure_ascii=False) + "\n"


def render(comparison: Comparison, format: str) -> str:
    if format == "json":
        return render_json(comparison)
    if format == "markdown":
        return render_markdown(comparison)
    return render_text(comparison)
