"""`reconcile diff`'s report as text and JSON, and what the Markdown shares with them
(`state_diff_markdown`: collapsible per controller and object, within a pull-request
comment's size). Every free text and value is scrubbed of known secret values; Secrets'
values are already redacted by the comparison."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from reconcile.report.diff import ChangeOp, to_yaml, yaml_lines
from reconcile.report.markdown_text import visible
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
SIGN = {ObjectChange.CREATED: "+", ObjectChange.DELETED: "-", ObjectChange.CHANGED: "~"}


def exit_status(comparison: Comparison) -> int:
    """0 the same, 2 different, 1 the comparison is not to be trusted (errors)."""
    if comparison.all_errors:
        return 1
    return 2 if comparison.diff.objects else 0


# -- shared ---------------------------------------------------------------------------------


def side_label(side: Side) -> str:
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


def group_title(group: str) -> str:
    return "from the manifests (no controller created them)" if group == MANIFESTS_GROUP else group


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


def by_group(comparison: Comparison) -> Iterator[tuple[str, list[ObjectDiff]]]:
    for group in comparison.diff.groups():
        yield group, [o for o in comparison.diff.objects if o.group == group]


# -- text -----------------------------------------------------------------------------------


def render_text(comparison: Comparison) -> str:
    lines = [
        visible(summary(comparison)),
        visible(f"  base: {side_label(comparison.base)}"),
        visible(f"  head: {side_label(comparison.head)}"),
    ]
    if not comparison.include_status:
        lines.append("  (status not compared: --status compares it)")
    errors = comparison.all_errors
    if errors:
        lines += [
            "",
            f"{len(errors)} error{'s' if len(errors) != 1 else ''} (the comparison is incomplete):",
        ]
        lines += [f"  {visible(scrub(e))}" for e in errors]
    for group, entries in by_group(comparison):
        lines += ["", visible(group_title(group))]
        for entry in entries:
            lines.append(visible(f"  {SIGN[entry.change]} {entry.title} {entry.change.value}"))
            if entry.change is ObjectChange.CHANGED:
                lines += [visible(f"      {sign} {text}") for sign, text in change_lines(entry)]
    return "\n".join(lines) + "\n"


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
        from reconcile.report.state_diff_markdown import render_markdown  # it imports this

        return render_markdown(comparison)
    return render_text(comparison)
