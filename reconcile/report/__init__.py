"""Reports of a run (RunResult): text for terminals, JSON for tools, Markdown for GitHub.

Every format shows the hook calls, the actions with a noise-free diff of what they change,
waits, errors and the cost of the run; Secret values are always redacted.
"""

from reconcile.objects.redact import redact
from reconcile.report.json_report import REPORT_SCHEMA_VERSION, report_dict
from reconcile.report.markdown import MARKDOWN_LIMIT
from reconcile.report.render import ReportFormat, render, render_to

__all__ = [
    "MARKDOWN_LIMIT",
    "REPORT_SCHEMA_VERSION",
    "ReportFormat",
    "redact",
    "render",
    "render_to",
    "report_dict",
]
