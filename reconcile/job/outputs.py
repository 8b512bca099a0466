"""The run's report files and metrics file, checked before the run (so that a run never does
its work and then loses what it reports) and written after it: to standard output or each file,
the others still written when one cannot be."""

from __future__ import annotations

import logging
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

from reconcile.config import ReportTarget, RunConfig
from reconcile.report import ReportFormat, render_to
from reconcile.results import RunResult

log = logging.getLogger("reconcile")


class OutputError(Exception):
    """A report file or the output directory cannot be written; found before the run."""


def check_report_files(targets: tuple[ReportTarget, ...]) -> None:
    """Every `--report-file` can be written: checked before the run, so that a run never does
    its work and then loses the report. Creates missing parent directories (and the file)."""
    for target in targets:
        if target.path is None:
            continue
        path = Path(target.path)
        try:
            if path.is_dir():
                raise OutputError(f"--report-file {path}: is a directory")
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8"):
                pass
        except OSError as exc:
            raise OutputError(
                f"--report-file {path}: cannot be written: {os_problem(exc)}"
            ) from None


def check_metrics_file(path: str | None) -> None:
    """`--metrics-file` can be written (its directory takes a new file, renamed over it):
    checked before the run, so that a run never does its work and then loses its metrics."""
    if not path:
        return
    target = Path(path)
    try:
        if target.is_dir():
            raise OutputError(f"--metrics-file {target}: is a directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=target.parent, prefix=f".{target.name}."):
            pass
    except OSError as exc:
        raise OutputError(
            f"--metrics-file {target}: cannot be written: {os_problem(exc)}"
        ) from None


def write_reports(result: RunResult, config: RunConfig) -> bool:
    """Every report; False (logged) when one could not be written."""

    def write(target: ReportTarget, stream: IO[str]) -> None:
        color = config.report.color if target.path is None else False  # no escapes in files
        render_to(
            stream,
            result,
            ReportFormat(target.format),
            color=color,
            verbose=config.report.verbose,
        )

    return write_report_streams(config.report.targets, write)


def write_report_texts(
    targets: tuple[ReportTarget, ...], text_of: Callable[[ReportTarget], str]
) -> bool:
    """Each target's text (`text_of`) to standard output or its file, as
    `write_report_streams` writes."""
    return write_report_streams(targets, lambda target, stream: stream.write(text_of(target)))


def write_report_streams(
    targets: tuple[ReportTarget, ...], write: Callable[[ReportTarget, IO[str]], object]
) -> bool:
    """Each target's report, written by `write` to standard output or its file; False (logged)
    when one could not be written, the others still are. Markdown files are appended to, as
    GitHub's $GITHUB_STEP_SUMMARY expects (a fresh file is the same)."""
    ok = True
    for target in targets:
        if target.path is None:
            try:
                write(target, sys.stdout)
                sys.stdout.flush()
            except OSError as exc:  # a closed pipe: the other reports still go out
                log.error("could not write the report to standard output: %s", os_problem(exc))
                ok = False
            continue
        path = Path(target.path)
        mode = "a" if target.format == ReportFormat.MARKDOWN else "w"
        try:
            with path.open(mode, encoding="utf-8", errors="backslashreplace") as stream:
                write(target, stream)
        except OSError as exc:
            log.error("could not write the %s report to %s: %s", target.format, path, exc)
            ok = False
            continue
        log.info("wrote the %s report to %s", target.format, path)
    return ok


def os_problem(exc: OSError) -> str:
    return exc.strerror or str(exc)
