"""One invocation end to end: check the outputs, pick the cluster (live or the embedded memory
one), run within the budget, report whatever happened, and turn the outcome into an exit code.
The CLI parses options into a RunConfig and calls `main_job`; nothing here parses arguments."""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import logging
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from enum import IntEnum
from pathlib import Path
from types import FrameType
from typing import IO

from reconcile import __version__
from reconcile.budget import Budget, BudgetExhausted
from reconcile.cluster.connect import connect_live
from reconcile.cluster.errors import ApiError
from reconcile.cluster.protocol import Cluster
from reconcile.config import ReconcileSettings, ReportTarget, RunConfig
from reconcile.files import is_standard_input, reading_inputs
from reconcile.report import ReportFormat, render_to
from reconcile.report.spool import DiffSpool, ForgetContent
from reconcile.results import Provenance, RunResult
from reconcile.runner.keeper import ResultKeeper
from reconcile.runner.output_dir import OutputDir, OutputDirError, prepare_output_dir
from reconcile.runner.progress import LoggedProgress, Progress
from reconcile.runner.run import RunLoop, shard_lock_name
from reconcile.runner.summary import log_summary

log = logging.getLogger("reconcile")

#: The last seconds of the budget kept for the report and the metrics (a tenth of a shorter
#: budget): the work stops that much before `--max-duration`.
CLOSING_RESERVE = 2.0


class ExitCode(IntEnum):
    """terraform plan -detailed-exitcode's scheme, and the shell's codes for signals."""

    OK = 0  # nothing pending: converged, or everything decided was applied
    ERROR = 1  # a controller, parent, hook or the cluster failed; or stopped mid-pass
    CHANGES_PENDING = 2  # dry-run only: the run would change something
    SIGINT = 130
    SIGTERM = 143


class OutputError(Exception):
    """A report file or the output directory cannot be written; found before the run."""


PR_SET_DUMPABLE = 4  # <linux/prctl.h>
RECORD_SECONDS = 5.0  # the least time a run record is given, past the budget if need be


def exit_code(result: RunResult) -> ExitCode:
    if result.interrupted == "SIGINT":
        return ExitCode.SIGINT
    if result.interrupted == "SIGTERM":
        return ExitCode.SIGTERM
    if result.errors or result.interrupted:
        return ExitCode.ERROR
    if result.dry_run and result.passes and result.passes[-1].pending:
        return ExitCode.CHANGES_PENDING
    return ExitCode.OK


class LocalInputError(Exception):
    """`--local`'s manifests cannot make the in-process cluster (the message says why)."""


def open_cluster(config: RunConfig, budget: Budget) -> Cluster:
    if config.local.enabled:
        # the in-process cluster is loaded only for --local: a live run never imports it
        from reconcile.files.seed import ManifestError
        from reconcile.runner.local import seeded_cluster

        try:
            with budget.interrupting("reading --local"):
                return seeded_cluster(
                    [Path(p) for p in config.local.manifest_paths],
                    recursive=config.reconcile.recursive,
                    kubernetes_version=config.local.kubernetes_version,
                )
        except (ManifestError, FileNotFoundError) as exc:
            raise LocalInputError(f"--local: {exc}") from exc
    return connect_live(config.connection, budget, config.reconcile.workers)


# -- outputs ----------------------------------------------------------------------------------


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
                f"--report-file {path}: cannot be written: {_os_problem(exc)}"
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
                log.error("could not write the report to standard output: %s", _os_problem(exc))
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


def _os_problem(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _inputs(config: RunConfig) -> list[Path]:
    """Every path the run reads: `--output-dir` must not overlap any of them."""
    return [
        Path(p)
        for p in (
            *config.local.manifest_paths,
            *config.reconcile.controller_paths,
            *config.reconcile.apply_paths,
        )
        if not is_standard_input(p)
    ]


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
            f"--metrics-file {target}: cannot be written: {_os_problem(exc)}"
        ) from None


# -- signals ----------------------------------------------------------------------------------


@contextlib.contextmanager
def stop_on_signals(budget: Budget) -> Iterator[None]:
    """SIGINT / SIGTERM (what a CronJob's deadline and `kubectl delete job` send) cancel the
    budget: the run stops at its next safe point and still reports. A second signal ends the
    process at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        signal.signal(signum, signal.SIG_DFL)
        log.warning(
            "%s received: stopping at the next safe point and writing the report "
            "(send it again to stop at once)",
            name,
        )
        budget.cancel(name)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


# -- the job ----------------------------------------------------------------------------------


def keep_process_private() -> None:
    """On Linux, mark this process not dumpable: a command hook, running as the same user,
    then cannot read the run's environment (`/proc/<pid>/environ`, git tokens among it) or
    attach to it. Programs it starts are dumpable again after their exec. A hook running as
    root (CAP_SYS_PTRACE) is not held back by this."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def main_job(config: RunConfig) -> tuple[RunResult | None, ExitCode]:
    """The whole job inside the budget and the signal handling, from the git checkout to the
    last metric: SIGINT / SIGTERM or the budget's end stop any phase, and a report follows."""
    seconds = config.reconcile.max_duration
    budget = Budget(seconds, reserve=min(CLOSING_RESERVE, seconds / 10))
    keep_process_private()
    writes_any_text()
    with stop_on_signals(budget):
        return _job(config, budget)


def writes_any_text() -> None:
    """Standard output and error write what they cannot encode as escapes (`\\ud800`), never
    fail on it: whatever reached a report or a log line, the report is still written."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


def _job(config: RunConfig, budget: Budget) -> tuple[RunResult | None, ExitCode]:
    started = datetime.now(UTC)
    source: Provenance | None = None
    if config.git.enabled:
        # Imported when used, like the metrics: they take a
        # noticeable part of every run's start-up.
        from reconcile.gitsource import GitSourceError

        try:
            check_report_files(config.report.targets)
            config, source = from_git(config, budget)
        except (OutputError, GitSourceError, BudgetExhausted) as exc:
            log.error("%s", exc)
            result = RunResult(
                dry_run=config.reconcile.dry_run,
                server_dry_run=config.reconcile.server_dry_run,
                fatal=True,
            )
            result.load_errors.append(str(exc))
            result.interrupted = budget.interrupted_by
            log_summary(result)
            write_reports(result, config)
            code = exit_code(result)
            write_metrics(result, code, config, budget)
            return result, code
    try:
        check_report_files(config.report.targets)
        check_metrics_file(config.metrics.file)
        output = (
            prepare_output_dir(Path(config.local.output_dir), _inputs(config))
            if config.local.output_dir
            else None
        )
    except (OutputError, OutputDirError) as exc:
        log.error("%s", exc)
        return None, ExitCode.ERROR
    # the output directory is told where the controllers came from: read as the run read them
    with reading_inputs(config.kustomize, budget), DiffSpool() as spool:
        # what the reports show of each action waits on disk, not in memory (none: not kept)
        keeper = spool if config.report.targets else ForgetContent()
        result, cluster = _run(config, budget, keeper)
        result.source = source
        log_summary(result)
        reported = write_reports(result, config)
        written = _write_output(output, cluster, result, config)
        code = exit_code(result)
        if code is ExitCode.OK and not (reported and written):
            code = ExitCode.ERROR
        # (the record and the metrics count actions, read back from the spool)
        if not write_run_record(result, code, config, budget, started):
            code = ExitCode.ERROR if code is ExitCode.OK else code
        if not write_metrics(result, code, config, budget):
            code = ExitCode.ERROR if code is ExitCode.OK else code
    return result, code


def run_record_place(settings: ReconcileSettings) -> tuple[str, str] | None:
    """(namespace, name) of the run record: `--run-record`, else the Lease's (each shard's
    its own, as its Lease is)."""
    where = settings.run_record or settings.lock
    if where is None or where == "none":
        return None
    namespace, _, name = where.partition("/")
    return namespace, shard_lock_name(name, settings.shard)


def write_run_record(
    result: RunResult, code: ExitCode, config: RunConfig, budget: Budget, started: datetime
) -> bool:
    """The run record, for a run that wrote (or tried to) in a real cluster; False (logged)
    when it could not be written. Written within the budget's reserve for last words (at
    least a few seconds: an interrupted run's record matters most)."""
    place = run_record_place(config.reconcile)
    if place is None or config.reconcile.dry_run or config.local.enabled or result.skipped:
        return True
    from reconcile.runner.lock import default_holder
    from reconcile.runner.run_record import record_data, record_error, write_record

    namespace, name = place
    data = record_data(
        result,
        int(code),
        started=started,
        ended=datetime.now(UTC),
        holder=config.reconcile.lock_holder or default_holder(),
        version=__version__,
    )
    closing = Budget(max(budget.closing_remaining(), RECORD_SECONDS))
    try:
        write_record(connect_live(config.connection, closing, 1), namespace, name, data)
    except (ApiError, BudgetExhausted) as exc:
        message = exc if isinstance(exc, BudgetExhausted) else record_error(exc, namespace, name)
        log.error("%s", message)
        return False
    log.info("wrote the run record: ConfigMap %s/%s", namespace, name)
    return True


def write_metrics(result: RunResult, code: ExitCode, config: RunConfig, budget: Budget) -> bool:
    """The run's metrics to the Pushgateway and/or the file asked for; False on a failure
    (logged: the run itself is done). The push is bounded by the budget's reserve for last
    words (the metrics of a run that hit its budget matter most)."""
    settings = config.metrics
    if not (settings.pushgateway or settings.file):
        return True
    from reconcile.metrics import MetricsError, push, run_registry, write_textfile

    registry = run_registry(result, int(code))
    ok = True
    try:
        if settings.file:
            write_textfile(Path(settings.file), registry, shard=result.shard)
        if settings.pushgateway:
            push(
                settings.pushgateway,
                registry,
                timeout=budget.closing_remaining(),
                shard=result.shard,
            )
    except MetricsError as exc:
        log.error("could not write the metrics: %s", exc)
        ok = False
    return ok


def from_git(config: RunConfig, budget: Budget | None = None) -> tuple[RunConfig, Provenance]:
    """Check the repository out (within the budget) and read every input path inside it; the
    checked-out tree is removed when the process ends. Raises GitSourceError."""
    from reconcile.gitsource import GitSourceError, checkout

    git = config.git
    assert git.url is not None
    cache = Path(git.cache_dir) if git.cache_dir else None
    checked_out = checkout(git.url, git.ref, cache, budget=budget)
    atexit.register(checked_out.cleanup)
    log.info(
        "git: %s at %s is commit %s (%s)",
        checked_out.url,
        checked_out.ref,
        checked_out.commit[:12],
        checked_out.subject,
    )
    root = checked_out.path

    def inside(paths: tuple[str, ...], option: str) -> tuple[str, ...]:
        found = []
        for path in paths:
            if is_standard_input(path):  # not a path: the run's standard input, as without --git
                found.append(path)
                continue
            full = (root / path).resolve()
            if Path(path).is_absolute() or not full.is_relative_to(root.resolve()):
                raise GitSourceError(
                    f"{option} {path}: with --git, paths are read inside the repository; "
                    "give a path relative to its root"
                )
            read = full.relative_to(root.resolve()).as_posix()
            for skipped, why in sorted(checked_out.unreadable.items()):
                if (
                    read in (".", skipped)
                    or skipped.startswith(f"{read}/")
                    or (read.startswith(f"{skipped}/"))
                ):
                    raise GitSourceError(
                        f"{option} {path}: {skipped} in the repository is {why}; not read"
                    )
            found.append(str(full))
        return tuple(found)

    config = replace(
        config,
        reconcile=replace(
            config.reconcile,
            controller_paths=inside(config.reconcile.controller_paths, "--controllers"),
            apply_paths=inside(config.reconcile.apply_paths, "--manifests"),
        ),
        local=replace(config.local, manifest_paths=inside(config.local.manifest_paths, "--local")),
        # a kustomization in the repository may name only the repository's files
        kustomize=replace(config.kustomize, confined_to=str(root.resolve())),
    )
    source = Provenance(checked_out.url, checked_out.ref, checked_out.commit, checked_out.subject)
    return config, source


def _run(
    config: RunConfig, budget: Budget, keeper: ResultKeeper | None = None
) -> tuple[RunResult, Cluster | None]:
    """The run, never raising: a failure to start becomes the result's error, so a report is
    written whatever happens. `keeper`: what it keeps of its results while it goes on (by
    default, everything in memory)."""
    with reading_inputs(config.kustomize, budget):
        return _run_reading(config, budget, keeper)


def _run_reading(
    config: RunConfig, budget: Budget, keeper: ResultKeeper | None
) -> tuple[RunResult, Cluster | None]:
    result = RunResult(
        dry_run=config.reconcile.dry_run, server_dry_run=config.reconcile.server_dry_run
    )
    try:
        cluster = open_cluster(config, budget)
    except LocalInputError as exc:
        return _failed(result, str(exc), budget), None
    except (ApiError, BudgetExhausted) as exc:
        message = exc.message if isinstance(exc, ApiError) else str(exc)
        return _failed(result, f"cannot reach the cluster: {message}", budget), None
    settings = config.reconcile
    if config.local.enabled:
        # The manifests are the controllers' home too: their command hooks run beside them.
        settings = settings.with_manifest_paths(config.local.manifest_paths)
    try:
        with contextlib.ExitStack() as stack:
            progress: Progress | None = None
            if config.progress:
                from reconcile.progressbar import TerminalProgress  # rich: on a terminal only

                progress = stack.enter_context(TerminalProgress())
            elif config.progress_interval > 0:
                progress = stack.enter_context(LoggedProgress(config.progress_interval))
            loop = RunLoop(cluster, settings, progress=progress, budget=budget, keeper=keeper)
            return loop.run(), cluster
    except ApiError as exc:
        return _failed(result, f"the cluster failed: {exc}", budget), cluster
    except Exception as exc:  # a bug: still report, and exit 1 rather than lose the report
        log.debug("internal error", exc_info=True)
        problem = f"internal error: {type(exc).__name__}: {exc} (--log-level debug shows where)"
        return _failed(result, problem, budget), cluster


def _failed(result: RunResult, error: str, budget: Budget) -> RunResult:
    result.load_errors.append(error)  # logged once, with the run's summary
    result.fatal = True
    result.interrupted = budget.interrupted_by
    return result


def _write_output(
    output: OutputDir | None, cluster: Cluster | None, result: RunResult, config: RunConfig
) -> bool:
    if output is None or cluster is None or not config.local.enabled:
        return True
    from reconcile.cluster.memory import MemoryCluster
    from reconcile.runner.local import controller_dirs

    if not isinstance(cluster, MemoryCluster):
        return True
    if result.fatal:
        log.warning("nothing written to %s: the run did not start", output.path)
        return True
    try:
        paths = [Path(p) for p in config.local.manifest_paths]
        hook_dirs = controller_dirs(paths, recursive=config.reconcile.recursive)
        written = output.write(cluster, hook_dirs)
    except OutputDirError as exc:
        log.error("%s", exc)
        return False
    log.info("wrote %d objects to %s", len(written), output.path)
    return True


def run_in_process(config: RunConfig, budget: Budget) -> tuple[RunResult, Cluster | None]:
    """One run as `reconcile` makes it (`--local`: in its own in-process cluster), without
    its reports and outputs: for commands built on runs (`reconcile diff`)."""
    return _run(config, budget)
