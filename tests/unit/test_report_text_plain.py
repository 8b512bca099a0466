"""The text report without colour is written without rich (whose import is a tenth of a short
run's start-up), and reads exactly as rich writes it: the same lines, the summary's tables laid
out as rich lays them out, and rich itself for a table it would wrap or whose characters it
measures."""

from __future__ import annotations

import io
import itertools

import pytest

from reconcile.report.text import (
    Cell,
    Column,
    _console,
    _PlainLines,
    _PlainWriter,
    _RichWriter,
    plain_table,
    write_text,
)
from reconcile.results import RunResult
from tests.unit.test_report import (
    empty_run,
    large_run,
    sample,
    secret_run,
    server_dry_run,
    two_pass_run,
)


def with_rich(result: RunResult, *, verbose: bool) -> str:
    """What rich writes without colour: the text report before it was written without rich."""
    out = io.StringIO()
    plain = _PlainLines(out)
    writer = _RichWriter(_console(plain, color=False), verbose)
    writer.run(result)
    writer.flush()
    plain.finish()
    return out.getvalue()


def without_rich(result: RunResult, *, verbose: bool) -> str:
    out = io.StringIO()
    write_text(out, result, color=False, verbose=verbose)
    return out.getvalue()


def results() -> dict[str, RunResult]:
    failing = sample(dry_run=False)
    failing.errors.append("boom\nsecond line")
    failing.warnings.append("a warning\nwith a continuation")
    return {
        "sample": sample(),
        "applied": sample(dry_run=False),
        "failing": failing,
        "two passes": two_pass_run(),
        "empty": empty_run(),
        "large": large_run(30),
        "secret": secret_run(dry_run=True),
        "server dry run": server_dry_run(),
    }


@pytest.mark.parametrize(("name", "verbose"), list(itertools.product(results(), (False, True))))
def test_the_plain_report_reads_as_rich_writes_it(name: str, verbose: bool) -> None:
    result = results()[name]
    assert without_rich(result, verbose=verbose) == with_rich(result, verbose=verbose)


def tables() -> list[tuple[list[Column], list[list[Cell]], bool]]:
    summary: list[Column] = [("", "left", "bold"), ("", "left", "")]
    actions: list[Column] = [("Action", "left", "bold")] + [
        (title, "right", "") for title in ("Applied", "Pending", "Failed")
    ]
    return [
        (summary, [[("Mode", None), ("dry run", None)], [("Errors", None), ("0", "")]], False),
        (summary, [[("Parents synced", None), ("", None)], [("", None), ("x", "green")]], False),
        (actions, [[("create", None), ("0", None), ("12345", None), ("1", None)]], True),
        (actions, [[("update-status", None), ("1", None), ("2", None), ("3", None)]], True),
        (actions, [], True),
        # what rich lays out itself: wider than the console, or not plain ASCII
        (summary, [[("API requests", None), ("list 6, " * 30, None)]], False),
        (summary, [[("Mode", None), ("dry run \u00e9t\u00e9 \u4e2d\u6587", None)]], False),
        (actions, [[("cr\teate", None), ("0", None), ("1", None), ("2", None)]], True),
    ]


RICH_LAYS_OUT = 3  # the last tables(): rich lays them out


@pytest.mark.parametrize("index", range(len(tables())))
def test_a_table_is_laid_out_as_rich_lays_it_out(index: int) -> None:
    columns, rows, header = tables()[index]
    by_rich = index >= len(tables()) - RICH_LAYS_OUT
    assert (plain_table(columns, rows, header=header) is None) == by_rich
    outs = []
    for rich in (False, True):
        out = io.StringIO()
        plain = _PlainLines(out)
        writer = _RichWriter(_console(plain, color=False)) if rich else _PlainWriter(plain)
        writer.table(columns, rows, header=header)
        plain.finish()
        outs.append(out.getvalue())
    assert outs[0] == outs[1]
