"""The text report, for terminals and logs: per pass, controller and parent, then a summary.

Styled with rich; without colour the output is plain text (no escape sequences at all).
"""

from __future__ import annotations

import io
from typing import IO, cast

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from reconcile.engine.actions import ActionKind
from reconcile.report.model import (
    ActionState,
    ActionView,
    Totals,
    has_news,
    headline,
    hooks_summary,
    kind_rows,
    mode,
    ms,
    parent_summary,
    plural,
    requests_summary,
    shard_line,
    source_line,
    stop_note,
    symbol,
    totals,
    view,
)
from reconcile.results import ControllerResult, HookCall, Outcome, ParentResult, RunResult

WIDTH = 120  # for the summary tables; other lines never wrap

# The SIMPLE_HEAD box (a rule under the header row only) in ASCII.
_ASCII_HEAD = box.Box("    \n    \n -- \n    \n    \n    \n    \n    \n", ascii=True)

_KIND_STYLES: dict[ActionKind, str] = {
    ActionKind.CREATE: "green",
    ActionKind.DELETE: "red",
}
_STATE_STYLES: dict[ActionState, str] = {
    ActionState.APPLIED: "green",
    ActionState.PENDING: "yellow",
    ActionState.FAILED: "bold red",
}
_LINE_STYLES = {"+": "green", "-": "red", " ": "dim"}
_OUTCOME_STYLES: dict[Outcome, str] = {
    Outcome.OK: "green",
    Outcome.CACHED: "cyan",
    Outcome.FAILED: "bold red",
}


def render_text(result: RunResult, *, color: bool = False, verbose: bool = False) -> str:
    """Compact by default: parents with nothing to say are one count per controller, hook
    calls are shown when they failed, and an error is told once where it happened (and once in
    the summary). `verbose`: every parent and hook call."""
    out = io.StringIO()
    write_text(out, result, color=color, verbose=verbose)
    return out.getvalue()


def write_text(
    stream: IO[str], result: RunResult, *, color: bool = False, verbose: bool = False
) -> None:
    """`render_text`'s text written to `stream` a parent at a time."""
    plain = None if color else _PlainLines(stream)
    console = Console(
        file=stream if plain is None else cast(IO[str], plain),  # rich only writes to it
        width=WIDTH,
        color_system="standard" if color else None,
        force_terminal=color,
        force_jupyter=False,
        force_interactive=False,
        no_color=not color,
        legacy_windows=False,
        markup=False,
        emoji=False,
        highlight=False,
        soft_wrap=True,
    )
    writer = _Writer(console, verbose)
    writer.run(result)
    writer.flush()
    if plain is not None:
        plain.finish()


class _PlainLines(io.TextIOBase):
    """Plain text as it reaches `stream`: without trailing spaces (rich pads table cells) and
    ending with a newline. Whole lines go out as they come; a line's start waits for its end."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._partial = ""
        self._wrote = False

    def write(self, text: str) -> int:
        whole, newline, self._partial = (self._partial + text).rpartition("\n")
        if newline:
            self._put(whole + newline)
        return len(text)

    def _put(self, text: str) -> None:
        # As `"\n".join(line.rstrip() for line in whole.splitlines()) + "\n"` would for the
        # whole text: `text` ends a line, so its lines are the same in the whole.
        self._stream.write("\n".join(line.rstrip() for line in text.splitlines()) + "\n")
        self._wrote = True

    def finish(self) -> None:
        """The last line, ended with a newline (and a lone newline for no text at all)."""
        if self._partial or not self._wrote:
            self._put(self._partial)
            self._partial = ""


class _Writer:
    """Collects lines (and tables); `flush` prints runs of lines as one Text, which rich
    renders much faster than line by line."""

    def __init__(self, console: Console, verbose: bool = False) -> None:
        self.console = console
        self.verbose = verbose
        self.pending: list[Text] = []

    def line(self, *parts: str | tuple[str, str], indent: int = 0) -> None:
        text = Text(" " * indent)
        # What a part brings on further lines (a message from input may hold newlines) is
        # marked as the continuation it is: it can never read as a line of the report's own.
        more = "\n" + " " * (indent + 2) + "| "
        for part in parts:
            if isinstance(part, tuple):
                text.append(part[0].replace("\n", more), style=part[1])
            else:
                text.append(part.replace("\n", more))
        self.pending.append(text)

    def flush(self) -> None:
        if not self.pending:
            return
        if self.console.color_system is None:  # plain: no need for rich's rendering
            self.console.file.write("".join(t.plain + "\n" for t in self.pending))
        else:
            self.console.print(Text("\n").join(self.pending))
        self.pending = []

    def table(self, table: Table) -> None:
        self.flush()
        self.console.print(table)

    def run(self, result: RunResult) -> None:
        t = totals(result)
        heading = mode(result) if result.dry_run else "run"
        style = "bold red" if t.errors else ("bold yellow" if t.pending else "bold green")
        self.line(("reconcile " + heading + ": ", "bold"), (headline(t), style))
        if (source := source_line(result)) is not None:
            self.line(("source: ", "bold"), source)
        if (shard := shard_line(result)) is not None:
            self.line(("shard: ", "bold"), shard)
        note = stop_note(result)
        if note:
            self.line(("! stopped: ", "bold red"), note)
        for warning in result.warnings:
            self.line(("! warning: ", "bold yellow"), warning)
        for pass_ in result.passes:
            if len(result.passes) > 1:
                self.line()
                self.line((f"Pass {pass_.number}", "bold underline"))
            for controller in pass_.controllers:
                self.controller(controller)
        self.line()
        self.summary(result, t)

    def controller(self, controller: ControllerResult) -> None:
        self.line()
        kind = ((f" ({controller.kind})", "dim"),) if controller.kind else ()
        self.line(("Controller ", "bold"), (controller.name, "bold cyan"), *kind)
        if not controller.parents and not controller.errors:
            self.line(("no parents", "dim"), indent=2)
        quiet = [] if self.verbose else [p for p in controller.parents if not has_news(p)]
        for parent in controller.parents:
            if not quiet or has_news(parent):
                self.parent(parent)
        if quiet:
            self.line(("= ", "dim"), (f"{plural(len(quiet), 'parent')} in sync", "green"), indent=2)
        for error in controller.errors:
            self.line(("! controller error: ", "bold red"), error, indent=2)

    def parent(self, parent: ParentResult) -> None:
        news = has_news(parent)
        summary = parent_summary(parent)
        mark, style = ("=", "dim") if not news else ("!" if parent.errors else "*", "bold")
        self.line(
            (mark + " ", style),
            (parent.parent, "bold"),
            (f" [{parent.mode}]", "dim"),
            ": ",
            (summary, "red" if parent.errors else ("yellow" if news else "green")),
            indent=2,
        )
        for hook in parent.hooks:
            if self.verbose or hook.outcome is Outcome.FAILED:
                # its error is the parent's: told once, below
                told = not self.verbose and any(hook.error in e for e in parent.errors)
                self.hook(hook, with_error=not told)
        group = ""
        for action in parent.actions:
            if action.action.group and action.action.group != group:
                group = action.action.group
                self.line(("for ", "dim"), (group, "bold"), indent=6)
            self.action(view(action))
        if parent.rollout is not None:
            self.line(("rollout: ", "cyan"), parent.rollout.describe(), indent=6)
        for wait in parent.waits:
            self.line(("! waits: ", "yellow"), wait, indent=6)
        for error in parent.errors:
            self.line(("! error: ", "bold red"), error, indent=6)
        self.flush()

    def hook(self, hook: HookCall, *, with_error: bool = True) -> None:
        parts: list[str | tuple[str, str]] = [
            ("hook ", "dim"),
            hook.hook + " ",
            (hook.outcome.value, _OUTCOME_STYLES[hook.outcome]),
            (f" {ms(hook.duration):g} ms  ", "dim"),
            (hook.target, "dim"),
        ]
        if hook.error and with_error:
            parts += [("  error: ", "bold red"), hook.error]
        self.line(*parts, indent=6)

    def action(self, action: ActionView) -> None:
        style = _KIND_STYLES.get(action.kind, "yellow")
        obj = action.object
        self.line(
            (f"{symbol(action.kind)} {action.kind.value} ", style),
            (str(obj), "bold"),
            (f" ({obj.api_version})", "dim"),
            " [",
            (action.state.value, _STATE_STYLES[action.state]),
            *(((", " + action.validation, "dim"),) if action.validation else ()),
            "] ",
            action.reason,
            indent=6,
        )
        if action.error:
            self.line(("! failed: ", "bold red"), action.error, indent=10)
        for sign, text in action.bounded_lines():
            self.line((f"{sign} {text}", _LINE_STYLES.get(sign, "")), indent=10)

    def summary(self, result: RunResult, t: Totals) -> None:
        self.line(("Summary", "bold"))
        table = Table(box=_ASCII_HEAD, show_header=False, show_edge=False, padding=(0, 1))
        table.add_column("", style="bold")
        table.add_column("")
        table.add_row("Mode", mode(result))
        table.add_row("Passes", str(t.passes))
        table.add_row("Parents synced", str(t.parents))
        table.add_row("Applied", str(t.applied))
        # compact: the counts that are zero, but for what a run is about, go unsaid
        if self.verbose or t.pending or result.dry_run:
            table.add_row("Pending", str(t.pending))
        if result.server_dry_run:
            table.add_row("Server-validated", f"{t.validated} of {t.pending} pending")
        if self.verbose or t.failed:
            table.add_row("Failed", str(t.failed))
        if self.verbose or t.waits:
            table.add_row("Waits", str(t.waits))
        table.add_row("Hook calls", hooks_summary(t))
        table.add_row("API requests", requests_summary(result.requests))
        table.add_row("Errors", Text(str(t.errors), style="bold red" if t.errors else ""))
        table.add_row("Wall time", f"{result.duration:.2f} s")
        table.add_row(
            "Converged",
            Text("yes", style="green") if result.converged else Text("no", style="yellow"),
        )
        self.table(table)
        rows = kind_rows(t)
        if rows:
            actions = Table(box=_ASCII_HEAD, show_edge=False, padding=(0, 1))
            actions.add_column("Action", style="bold")
            for state in ActionState:
                actions.add_column(state.value.capitalize(), justify="right")
            for kind, applied, pending, failed in rows:
                actions.add_row(kind, str(applied), str(pending), str(failed))
            self.table(actions)
        if result.due_next_run:
            self.line(("Due at the next run", "bold"))
            for due in result.due_next_run:
                self.line("- ", due, indent=2)
        if result.errors:
            self.line(("Errors", "bold red"))
            for error in result.errors:
                self.line(("! ", "bold red"), error, indent=2)
