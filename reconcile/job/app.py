"""One invocation end to end: check the outputs, pick the cluster (live or the embedded memory
one), run within the budget, report whatever happened, and turn the outcome into an exit code.
The CLI parses options into a RunConfig and calls `main_job`; nothing here parses arguments."""

from __future__ import annotations

import contextlib
import logging
from datetime import UTC, datetime
from enum import IntEnum
from pathlib import Path

from reconcile.budget import Budget, BudgetExhausted
from reconcile.cluster.connect import connect_live
from reconcile.cluster.errors import ApiError
from reconcile.cluster.protocol import Cluster
from reconcile.config import RunConfig
from reconcile.files import is_standard_input, reading_inputs
from reconcile.job.git_inputs import from_git
from reconcile.job.output_dir import OutputDir, OutputDirError, prepare_output_dir
from reconcile.job.outputs import (
    OutputError,
    check_metrics_file,
    check_report_files,
    write_reports,
)
from reconcile.job.process import keep_process_private, stop_on_signals, writes_any_text
from reconcile.job.run_record import write_run_record
from reconcile.job.summary import log_summary
from reconcile.report.spool import DiffSpool, ForgetContent
from reconcile.results import Provenance, RunResult
from reconcile.runner.keeper import KeptUntilLarge, ResultKeeper
from reconcile.runner.progress import LoggedProgress, Progress

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
        from reconcile.job.local import seeded_cluster

        try:
            with budget.interrupting("reading --local"):
                return seeded_cluster(
                    [Path(p) for p in config.local.manifest_paths],
                    recursive=config.reconcile.recursive,
                    kubernetes_version=config.local.kubernetes_version,
                )
        except (ManifestError, FileNotFoundError) as exc:
            raise LocalInputError(f"--local: {exc}") from exc
    # its first request goes out now, while the run's modules load (below, in _run_reading)
    return connect_live(config.connection, budget, config.reconcile.workers, look_up_release=True)


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


# -- the job ----------------------------------------------------------------------------------


def main_job(config: RunConfig) -> tuple[RunResult | None, ExitCode]:
    """The whole job inside the budget and the signal handling, from the git checkout to the
    last metric: SIGINT / SIGTERM or the budget's end stop any phase, and a report follows."""
    seconds = config.reconcile.max_duration
    budget = Budget(seconds, reserve=min(CLOSING_RESERVE, seconds / 10))
    keep_process_private()
    writes_any_text()
    with stop_on_signals(budget):
        return _job(config, budget)


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
        # what the reports show of each action waits on disk once the run is large, not in
        # memory (none: not kept)
        keeper = KeptUntilLarge(spool) if config.report.targets else ForgetContent()
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


def write_metrics(result: RunResult, code: ExitCode, config: RunConfig, budget: Budget) -> bool:
    """The run's metrics to the Pushgateway and/or the file asked for; False on a failure
    (logged: the run itself is done). The push is bounded by the budget's reserve for last
    words (the metrics of a run that hit its budget matter most)."""
    settings = config.metrics
    if not (settings.pushgateway or settings.file):
        return True
    from reconcile.job.metrics import MetricsError, push, run_registry, write_textfile

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
    # the engine and the runner: loaded once the cluster is open (a live run's first request is
    # then in flight), and never by a run that cannot start
    from reconcile.runner.run import RunLoop

    settings = config.reconcile
    if config.local.enabled:
        # The manifests are the controllers' home too: their command hooks run beside them.
        settings = settings.with_manifest_paths(config.local.manifest_paths)
    try:
        with contextlib.ExitStack() as stack:
            progress: Progress | None = None
            if config.progress:
                from reconcile.job.progressbar import TerminalProgress  # rich: on a terminal only

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
    from reconcile.job.local import controller_dirs

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
