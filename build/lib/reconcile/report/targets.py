"""Report file arguments: `FORMAT:PATH`, or a path whose extension says the format."""

from __future__ import annotations

from reconcile.config import ReportTarget
from reconcile.report.render import ReportFormat

_BY_SUFFIX = {".json": ReportFormat.JSON, ".md": ReportFormat.MARKDOWN}


def parse_report_file(value: str) -> ReportTarget:
    """`json:out.json`, `markdown:$GITHUB_STEP_SUMMARY`, `report.md`, `report.txt`.
    ValueError for an unknown format prefix."""
    prefix, sep, rest = value.partition(":")
    if sep and prefix in {f.value for f in ReportFormat}:
        return ReportTarget(prefix, rest)
    if sep and prefix.isalpha() and len(prefix) > 1 and not rest.startswith("//"):
        choices = ", ".join(f.value for f in ReportFormat)
        raise ValueError(f"{value!r}: unknown report format {prefix!r} (one of: {choices})")
    suffix = value[value.rfind(".") :].lower() if "." in value else ""
    return ReportTarget(_BY_SUFFIX.get(suffix, ReportFormat.TEXT).value, value)
