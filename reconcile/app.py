"""One invocation end to end: pick the cluster (live or the embedded memory one), run, report,
and turn the outcome into an exit code. The CLI parses options into a RunConfig and calls
`main_job`; nothing here parses arguments."""

from __future__ import annotations

import contextlib
import logging
import sys
from enum import IntEnum
from pathlib import Path

from reconcile.cluster.connect import connect_live
from reconcile.cluster.errors import ApiError
from reconcile.cluster.memory import ManifestError, MemoryCluster
from reconcile.cluster.protocol import Cluster
from reconcile.config import RunConfig
from reconcile.progressbar import TerminalProgress
from reconcile.report import ReportFormat, render
from reconcile.runner.local import seeded_cluster, write_objects
from reconcile.runner.results import RunResult
from reconcile.runner.run import Runner
from reconcile.runner.summary import log_summary

log = logging.getLogger("reconcile")


class ExitCode(IntEnum):
    """terraform plan -detailed-exitcode's scheme."""

    OK = 0  # nothing pending: converged, or everything decided was applied
    ERROR = 1  # a controller, parent, hook or the cluster failed
    CHANGES_PENDING = 2  # dry-run only: the run would change something


def exit_code(result: RunResult) -> ExitCode:
    if result.errors:
        return ExitCode.ERROR
    if result.dry_run and result.passes and result.passes[-1].pending:
        return ExitCode.CHANGES_PENDING
    return ExitCode.OK


def open_cluster(config: RunConfig) -> Cluster:
    if config.local.enabled:
        return seeded_cluster(
            [Path(p) for p in config.local.manifest_paths], recursive=config.reconcile.recursive
        )
    return connect_live(config.connection)


def write_reports(result: RunResult, config: RunConfig) -> None:
    for target in config.report.targets:
        if target.path is None:
            text = render(result, ReportFormat(target.format), color=config.report.color)
            sys.stdout.write(text)
            sys.stdout.flush()
            continue
        path = Path(target.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Append, as GitHub's $GITHUB_STEP_SUMMARY expects; a fresh file is the same.
        mode = "a" if target.format == ReportFormat.MARKDOWN else "w"
        with path.open(mode, encoding="utf-8") as stream:
            stream.write(render(result, ReportFormat(target.format)))
        log.info("wrote the %s report to %s", target.format, path)


def main_job(config: RunConfig) -> tuple[RunResult | None, ExitCode]:
    try:
        cluster = open_cluster(config)
    except ManifestError as exc:
        log.error("--local: %s", exc)
        return None, ExitCode.ERROR
    except FileNotFoundError as exc:
        log.error("--local: %s", exc)
        return None, ExitCode.ERROR
    except ApiError as exc:
        log.error("cannot reach the cluster: %s", exc.message)
        return None, ExitCode.ERROR
    settings = config.reconcile
    if config.local.enabled:
        # The manifests are the controllers' home too: their command hooks run beside them.
        settings = settings.with_manifest_paths(config.local.manifest_paths)
    try:
        with contextlib.ExitStack() as stack:
            progress = None
            if config.progress:
                progress = stack.enter_context(TerminalProgress())
            result = Runner(cluster, settings, progress=progress).run()
    except ApiError as exc:
        log.error("the cluster failed: %s", exc)
        return None, ExitCode.ERROR
    log_summary(result)
    write_reports(result, config)
    if config.local.output_dir and isinstance(cluster, MemoryCluster):
        written = write_objects(cluster, Path(config.local.output_dir))
        log.info("wrote %d objects to %s", len(written), config.local.output_dir)
    return result, exit_code(result)
