"""Reports of a run (RunResult): text for terminals, JSON for tools, Markdown for GitHub.

Every format shows the hook calls, the actions with a noise-free diff of what they change,
waits, errors and the cost of the run; Secret values are always redacted.

A format's module is loaded when it is used (`render` imports it; the JSON and Markdown names
below on first use, PEP 562): a run loads only the formats it writes.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from reconcile.objects.redact import redact
from reconcile.report.render import ReportFormat, render, render_to

if TYPE_CHECKING:
    from reconcile.report.json_report import REPORT_SCHEMA_VERSION, report_dict
    from reconcile.report.markdown import MARKDOWN_LIMIT

__all__ = [
    "MARKDOWN_LIMIT",
    "REPORT_SCHEMA_VERSION",
    "ReportFormat",
    "redact",
    "render",
    "render_to",
    "report_dict",
]

_LOADED_ON_USE = {
    "MARKDOWN_LIMIT": "reconcile.report.markdown",
    "REPORT_SCHEMA_VERSION": "reconcile.report.json_report",
    "report_dict": "reconcile.report.json_report",
}


def __getattr__(name: str) -> Any:
    home = _LOADED_ON_USE.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
