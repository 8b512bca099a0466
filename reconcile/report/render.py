"""One entry point for every report format."""

from __future__ import annotations

import io
from dataclasses import replace
from enum import StrEnum
from typing import IO, Any

from reconcile.engine.changes import FieldChange
from reconcile.objects.terminal import printable
from reconcile.results import (
    ActionResult,
    ControllerResult,
    HookCall,
    NotConverging,
    ParentResult,
    PassResult,
    RunResult,
)
from reconcile.secret_values import scrub


class ReportFormat(StrEnum):
    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"


def render(
    result: RunResult, fmt: ReportFormat, *, color: bool = False, verbose: bool = False
) -> str:
    """The report of a run in `fmt`. `color` (ANSI escapes) and `verbose` (every parent and
    hook call, not only what has news) apply to TEXT only. Secret values are redacted in every
    format."""
    out = io.StringIO()
    render_to(out, result, fmt, color=color, verbose=verbose)
    return out.getvalue()


def render_to(
    stream: IO[str],
    result: RunResult,
    fmt: ReportFormat,
    *,
    color: bool = False,
    verbose: bool = False,
) -> None:
    """`render`'s text written to `stream` as it is made: a large run's JSON or text report
    is never whole in memory."""
    fmt = ReportFormat(fmt)  # also accepts the plain string, e.g. from a CLI option
    result = scrubbed(result)
    # Each format's module is imported here, for the formats asked for: the text report's
    # rich is most of the cost of loading the three.
    if fmt is ReportFormat.TEXT:
        from reconcile.report.text import write_text

        write_text(stream, result, color=color, verbose=verbose)
    elif fmt is ReportFormat.JSON:
        from reconcile.report.json_report import write_json

        write_json(stream, result)
    elif fmt is ReportFormat.MARKDOWN:
        from reconcile.report.markdown import render_markdown

        stream.write(render_markdown(result))  # bounded: MARKDOWN_LIMIT
    else:  # pragma: no cover
        raise AssertionError(fmt)


def scrubbed(result: RunResult) -> RunResult:
    """A copy of `result` whose free text (errors, waits, hook errors) has every Secret value
    scrubbed: excerpts of hook output and API errors may quote them. Objects are redacted by
    the diff itself, structurally."""
    source = result.source
    if source is not None:
        source = replace(source, subject=printable(source.subject), ref=printable(source.ref))
    return replace(
        result,
        source=source,
        load_errors=_texts(result.load_errors),
        due_next_run=_texts(result.due_next_run),
        warnings=_texts(result.warnings),
        passes=[_pass(p) for p in result.passes],
        not_converging=[_divergence(n) for n in result.not_converging],
    )


def _texts(texts: list[str]) -> list[str]:
    return [_text(t) for t in texts]


def _text(text: str) -> str:
    """Scrubbed, and safe for a terminal (free text may carry escape sequences)."""
    return printable(scrub(text))


def _divergence(stuck: NotConverging) -> NotConverging:
    """Field values may quote a Secret's (a ConfigMap built from one): scrubbed like text."""
    changes = tuple(
        FieldChange(c.path, _scrub_value(c.wanted), _scrub_value(c.kept)) for c in stuck.changes
    )
    return replace(stuck, changes=changes)


def _scrub_value(value: Any) -> Any:
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, dict):
        return {k: _scrub_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub_value(v) for v in value]
    return value


def _pass(pass_: PassResult) -> PassResult:
    return replace(pass_, controllers=[_controller(c) for c in pass_.controllers])


def _controller(controller: ControllerResult) -> ControllerResult:
    return replace(
        controller,
        errors=_texts(controller.errors),
        parents=[_parent(p) for p in controller.parents],
    )


def _parent(parent: ParentResult) -> ParentResult:
    hooks = [_hook(h) for h in parent.hooks]  # a webhook's URL may carry a password
    if not (parent.errors or parent.waits or any(h.error for h in parent.hooks)) and not any(
        a.error for a in parent.actions
    ):
        return replace(parent, hooks=hooks) if hooks != parent.hooks else parent
    return replace(
        parent,
        errors=_texts(parent.errors),
        waits=_texts(parent.waits),
        hooks=hooks,
        actions=[_action(a) for a in parent.actions],
    )


def _hook(hook: HookCall) -> HookCall:
    target = _text(hook.target)
    if target == hook.target and not hook.error:
        return hook
    return replace(hook, target=target, error=_text(hook.error) if hook.error else hook.error)


def _action(action: ActionResult) -> ActionResult:
    return replace(action, error=_text(action.error)) if action.error else action
