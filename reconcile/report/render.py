"""One entry point for every report format."""

from __future__ import annotations

import json
from enum import StrEnum

from reconcile.report.json_report import report_dict
from reconcile.report.markdown import render_markdown
from reconcile.report.text import render_text
from reconcile.runner.results import RunResult


class ReportFormat(StrEnum):
    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"


def render(result: RunResult, fmt: ReportFormat, *, color: bool = False) -> str:
    """The report of a run in `fmt`. `color` (ANSI escapes) applies to TEXT only. Secret
    values are redacted in every format."""
    fmt = ReportFormat(fmt)  # also accepts the plain string, e.g. from a CLI option
    if fmt is ReportFormat.TEXT:
        return render_text(result, color=color)
    if fmt is ReportFormat.JSON:
        # Compact: the C encoder is an order of magnitude faster on large runs (`jq .` indents).
        compact = json.dumps(report_dict(result), ensure_ascii=False, separators=(",", ":"))
        return compact + "\n"
    if fmt is ReportFormat.MARKDOWN:
        return render_markdown(result)
    raise AssertionError(fmt)  # pragma: no cover
