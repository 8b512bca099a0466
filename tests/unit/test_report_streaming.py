"""Reports written as they are made (render_to): the same bytes as the whole text, never the
whole report in memory at once."""

from __future__ import annotations

import io
import json
import random

import pytest

from reconcile.report import ReportFormat, render, render_to, report_dict
from reconcile.report.text import _PlainLines
from reconcile.results import ControllerResult, PassResult, RunResult
from tests.unit.test_report import empty_run, sample, two_pass_run


class Writes(io.StringIO):
    """A stream that counts the writes it gets."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        return super().write(text)


def sparse_runs() -> list[RunResult]:
    """Runs whose lists are empty at each level the JSON is opened at."""
    return [
        RunResult(dry_run=False),
        RunResult(dry_run=False, passes=[PassResult(1)]),
        RunResult(dry_run=True, passes=[PassResult(1, [ControllerResult("empty")])]),
        RunResult(
            dry_run=False,
            passes=[PassResult(1, [ControllerResult("a"), ControllerResult("b")]), PassResult(2)],
        ),
    ]


@pytest.mark.parametrize(
    "result", [sample(), sample(dry_run=False), two_pass_run(), empty_run(), *sparse_runs()]
)
def test_streamed_json_is_one_compact_dumps(result: RunResult) -> None:
    whole = json.dumps(report_dict(result), ensure_ascii=False, separators=(",", ":")) + "\n"
    assert render(result, ReportFormat.JSON) == whole


def test_json_and_text_are_written_a_piece_at_a_time() -> None:
    result = two_pass_run()
    for fmt in (ReportFormat.JSON, ReportFormat.TEXT):
        stream = Writes()
        render_to(stream, result, fmt, verbose=True)
        assert stream.getvalue() == render(result, fmt, verbose=True)
        assert stream.writes > 3  # not one write of the whole


TRICKY = [
    "",
    "\n",
    "one line",
    "padded   \nlines  \n\n  \n",
    "no final newline   ",
    "crlf  \r\nand cr \rand vt\x0band ls\u2028end  \n",
    "a\n\n\nb  \n",
]


def whole_plain(text: str) -> str:
    """What the text report did with the whole text at once."""
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


@pytest.mark.parametrize("text", TRICKY)
def test_plain_lines_in_any_pieces_are_the_whole_text_stripped(text: str) -> None:
    pick = random.Random(text)
    for _ in range(50):
        cuts = sorted(pick.sample(range(len(text) + 1), k=min(len(text) + 1, pick.randint(0, 4))))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        out = io.StringIO()
        plain = _PlainLines(out)
        for piece in pieces:
            plain.write(piece)
        plain.finish()
        assert out.getvalue() == whole_plain(text), pieces
