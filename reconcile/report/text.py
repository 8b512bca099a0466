"""The text report, for terminals and logs: per pass, controller and parent, then a summary.

Styled with rich on a terminal. Without colour the output is plain text (no escape sequences at
all), written without rich, whose import is a tenth of a short run's start-up: the same lines,
and the summary's tables laid out as rich lays them out (rich lays out any table it would wrap).
"""

from __future__ import annotations

import io
from typing import IO, TYPE_CHECKING, Any, cast

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

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

WIDTH = 120  # for the summary tables; other lines never wrap

# A line's part: text, or (text, style). A table's column: (header, justify, style); a cell:
# (text, style), a style of None for a cell without a style of its own.
Part = str | tuple[str, str]
Column = tuple[str, str, str]
Cell = tuple[str, str | None]

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
    writer: _Writer = (
        _RichWriter(_console(stream, color=True), verbose)
        if plain is None
        else _PlainWriter(plain, verbose)
    )
    writer.run(result)
    writer.flush()
    if plain is not None:
        plain.finish()


def _console(stream: IO[str] | io.TextIOBase, *, color: bool) -> Console:
    from rich.console import Console

    return Console(
        file=cast(IO[str], stream),  # rich only writes to it
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
    """What the report says, line by line and table by table; how it is written is its
    subclasses': plain text, or rich's styled text."""

    def __init__(self, verbose: bool = False) -> None:
        self.verbose = verbose

    def line(self, *parts: Part, indent: int = 0) -> None:
        raise NotImplementedError

    def flush(self) -> None:
        raise NotImplementedError

    def table(self, columns: list[Column], rows: list[list[Cell]], *, header: bool) -> None:
        raise NotImplementedError

    @staticmethod
    def _continued(text: str, indent: int) -> str:
        # What a part brings on further lines (a message from input may hold newlines) is
        # marked as the continuation it is: it can never read as a line of the report's own.
        return text.replace("\n", "\n" + " " * (indent + 2) + "| ")

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
        rows: list[list[Cell]] = [
            [("Mode", None), (mode(result), None)],
            [("Passes", None), (str(t.passes), None)],
            [("Parents synced", None), (str(t.parents), None)],
            [("Applied", None), (str(t.applied), None)],
        ]
        # compact: the counts that are zero, but for what a run is about, go unsaid
        if self.verbose or t.pending or result.dry_run:
            rows.append([("Pending", None), (str(t.pending), None)])
        if result.server_dry_run:
            rows.append(
                [("Server-validated", None), (f"{t.validated} of {t.pending} pending", None)]
            )
        if self.verbose or t.failed:
            rows.append([("Failed", None), (str(t.failed), None)])
        if self.verbose or t.waits:
            rows.append([("Waits", None), (str(t.waits), None)])
        rows += [
            [("Hook calls", None), (hooks_summary(t), None)],
            [("API requests", None), (requests_summary(result.requests), None)],
            [("Errors", None), (str(t.errors), "bold red" if t.errors else "")],
            [("Wall time", None), (f"{result.duration:.2f} s", None)],
            [("Converged", None), ("yes", "green") if result.converged else ("no", "yellow")],
        ]
        self.table([("", "left", "bold"), ("", "left", "")], rows, header=False)
        kinds = kind_rows(t)
        if kinds:
            columns = [("Action", "left", "bold")]
            columns += [(state.value.capitalize(), "right", "") for state in ActionState]
            self.table(
                columns,
                [
                    [(kind, None), (str(applied), None), (str(pending), None), (str(failed), None)]
                    for kind, applied, pending, failed in kinds
                ],
                header=True,
            )
        if result.due_next_run:
            self.line(("Due at the next run", "bold"))
            for due in result.due_next_run:
                self.line("- ", due, indent=2)
        if result.errors:
            self.line(("Errors", "bold red"))
            for error in result.errors:
                self.line(("! ", "bold red"), error, indent=2)


class _PlainWriter(_Writer):
    """Plain text, without rich: its lines as they are, its tables as rich lays them out."""

    def __init__(self, stream: io.TextIOBase, verbose: bool = False) -> None:
        super().__init__(verbose)
        self.stream = stream
        self.pending: list[str] = []

    def line(self, *parts: Part, indent: int = 0) -> None:
        texts = (part if isinstance(part, str) else part[0] for part in parts)
        self.pending.append(" " * indent + "".join(self._continued(t, indent) for t in texts))

    def flush(self) -> None:
        if self.pending:
            self.stream.write("".join(text + "\n" for text in self.pending))
            self.pending = []

    def table(self, columns: list[Column], rows: list[list[Cell]], *, header: bool) -> None:
        self.flush()
        laid_out = plain_table(columns, rows, header=header)
        if laid_out is None:  # rich wraps what does not fit, in its own way: rich writes it
            _RichWriter(_console(self.stream, color=False), self.verbose).table(
                columns, rows, header=header
            )
        else:
            self.stream.write(laid_out)


def plain_table(columns: list[Column], rows: list[list[Cell]], *, header: bool) -> str | None:
    """The table as rich lays it out without colour, for the summary's box (no edge, a space
    of padding either side of a cell, a space between columns, a rule of dashes under the
    header); None for a table whose every cell is not printable ASCII or that is not narrower
    than WIDTH (rich measures other characters' width, and wraps a table wider than it)."""
    texts = [[text for text, _ in row] for row in rows]
    if header:
        texts.insert(0, [title for title, _, _ in columns])
    if not all(text.isascii() and text.isprintable() for row in texts for text in row):
        return None
    widths = [max((len(row[i]) for row in texts), default=0) for i in range(len(columns))]
    if sum(width + 2 for width in widths) + len(widths) - 1 >= WIDTH:
        return None
    lines = [
        " ".join(
            f" {text.rjust(width) if justify == 'right' else text.ljust(width)} "
            for text, width, (_, justify, _) in zip(row, widths, columns, strict=True)
        )
        for row in texts
    ]
    if header:
        lines.insert(1, "-".join("-" * (width + 2) for width in widths))
    return "".join(line + "\n" for line in lines)


class _RichWriter(_Writer):
    """Styled text through rich: collects lines; `flush` prints runs of lines as one Text,
    which rich renders much faster than line by line."""

    def __init__(self, console: Console, verbose: bool = False) -> None:
        from rich.text import Text

        super().__init__(verbose)
        self.console = console
        self.pending: list[Text] = []
        self.text = Text

    def line(self, *parts: Part, indent: int = 0) -> None:
        text = self.text(" " * indent)
        for part in parts:
            if isinstance(part, tuple):
                text.append(self._continued(part[0], indent), style=part[1])
            else:
                text.append(self._continued(part, indent))
        self.pending.append(text)

    def flush(self) -> None:
        # lines come here with colour only: plain lines are _PlainWriter's
        if self.pending:
            self.console.print(self.text("\n").join(self.pending))
            self.pending = []

    def table(self, columns: list[Column], rows: list[list[Cell]], *, header: bool) -> None:
        from rich import box
        from rich.table import Table

        self.flush()
        # The SIMPLE_HEAD box (a rule under the header row only) in ASCII.
        ascii_head = box.Box("    \n    \n -- \n    \n    \n    \n    \n    \n", ascii=True)
        table = Table(box=ascii_head, show_header=header, show_edge=False, padding=(0, 1))
        for title, justify, style in columns:
            table.add_column(title, style=style, justify=cast(Any, justify))
        for row in rows:
            table.add_row(
                *(text if style is None else self.text(text, style=style) for text, style in row)
            )
        self.console.print(table)
