"""`reconcile diff`: what a change to a repository does, without a cluster.

Each side (the base and the head: two directories, or two refs of one repository) is read
and run to convergence in an in-process cluster of its own, as `reconcile --local` runs it;
the two final states are then compared object by object (`report.state_diff`)."""

from __future__ import annotations

import logging
from dataclasses import field, replace
from pathlib import Path

from reconcile.budget import Budget, BudgetExhausted
from reconcile.cluster.memory import MemoryCluster
from reconcile.config import (
    GitSettings,
    KustomizeIsolation,
    KustomizeSettings,
    LocalSettings,
    ReconcileSettings,
    ReportTarget,
    RunConfig,
)
from reconcile.engine.actions import ActionKind
from reconcile.files.dump import dump_entries
from reconcile.job.app import ExitCode, run_in_process
from reconcile.job.git_inputs import from_git
from reconcile.job.outputs import write_report_texts
from reconcile.job.process import keep_process_private, stop_on_signals
from reconcile.records import dataclass
from reconcile.report.state_diff import Comparison, Key, Side, StateDiff, compare_states
from reconcile.report.state_diff_render import exit_status, render
from reconcile.results import RunResult

log = logging.getLogger(__name__)

CLOSING_RESERVE = 2.0


@dataclass(frozen=True)
class DiffConfig:
    """`base` and `head` are directories, or refs of `git.url` when it is set; `local` and
    `controllers` are read inside each (relative to the directory, or to the repository's
    root)."""

    base: str
    head: str
    local: tuple[str, ...] = (".",)
    controllers: tuple[str, ...] = ()
    only_controllers: frozenset[str] = frozenset()
    recursive: bool = False
    include_status: bool = False
    git: GitSettings = field(default_factory=GitSettings)
    kubernetes_version: str | None = None
    max_duration: float = 300.0
    workers: int = 8
    allowed_hook_hosts: tuple[str, ...] | None = None
    kustomize_allow_remote: bool = False
    kustomize_isolation: KustomizeIsolation = KustomizeIsolation.AUTO
    reports: tuple[ReportTarget, ...] = (ReportTarget("text"),)


def diff_job(config: DiffConfig) -> tuple[Comparison, ExitCode]:
    """Both sides run, compared, reported. Exit 0 the same, 2 different, 1 errors."""
    budget = Budget(config.max_duration, reserve=min(CLOSING_RESERVE, config.max_duration / 10))
    keep_process_private()
    with stop_on_signals(budget):
        base, base_result, base_cluster = _run_side(config, config.base, "base", budget)
        head, head_result, head_cluster = _run_side(config, config.head, "head", budget)
    diff = StateDiff()
    errors: tuple[str, ...] = ()
    if base_cluster is not None and head_cluster is not None:
        diff = compare_states(
            [obj for _, obj in dump_entries(base_cluster)],
            [obj for _, obj in dump_entries(head_cluster)],
            base_creators=_creators(base_result),
            head_creators=_creators(head_result),
            include_status=config.include_status,
        )
    else:
        errors = ("one side could not be run: nothing was compared",)
    comparison = Comparison(base, head, diff, config.include_status, errors)
    written = write_report_texts(config.reports, lambda t: render(comparison, t.format))
    code = ExitCode(exit_status(comparison))
    if budget.interrupted_by == "SIGINT":
        code = ExitCode.SIGINT
    elif budget.interrupted_by == "SIGTERM":
        code = ExitCode.SIGTERM
    if not written and code is not ExitCode.ERROR:
        code = ExitCode.ERROR
    return comparison, code


def _run_side(
    config: DiffConfig, where: str, name: str, budget: Budget
) -> tuple[Side, RunResult | None, MemoryCluster | None]:
    run = _side_config(config, where)
    label = where
    commit = subject = ""
    if config.git.enabled:
        from reconcile.gitsource import GitSourceError

        try:
            run, source = from_git(run, budget)
        except (GitSourceError, BudgetExhausted) as exc:
            return Side(label, errors=(str(exc),)), None, None
        commit, subject = source.commit, source.subject
    else:
        missing = [
            p
            for p in (*run.local.manifest_paths, *run.reconcile.controller_paths)
            if not Path(p).exists()
        ]
        if not Path(where).is_dir():
            return Side(label, errors=(f"{name} {where}: no such directory",)), None, None
        if missing:
            return (
                Side(label, errors=tuple(f"{p}: no such file or directory" for p in missing)),
                None,
                None,
            )
    log.info("diff: running the %s (%s)", name, label)
    result, cluster = run_in_process(run, budget)
    side = Side(
        label,
        commit=commit,
        subject=subject,
        errors=tuple(result.errors),
        passes=len(result.passes),
        converged=result.converged,
    )
    return side, result, cluster if isinstance(cluster, MemoryCluster) else None


def _side_config(config: DiffConfig, where: str) -> RunConfig:
    """A `--local` run of one side: paths inside the side's directory (with --git, inside the
    checkout: `from_git` resolves them)."""
    root = Path(where)

    def inside(paths: tuple[str, ...]) -> tuple[str, ...]:
        return paths if config.git.enabled else tuple(str(root / p) for p in paths)

    return RunConfig(
        reconcile=ReconcileSettings(
            controller_paths=inside(config.controllers),
            only_controllers=config.only_controllers,
            controllers_from_cluster=True,
            workers=config.workers,
            max_duration=config.max_duration,
            recursive=config.recursive,
            allowed_hook_hosts=config.allowed_hook_hosts,
            controllers_optional=True,  # a diff of plain manifests is a normal use
        ),
        local=LocalSettings(
            manifest_paths=inside(config.local), kubernetes_version=config.kubernetes_version
        ),
        git=replace(config.git, ref=where) if config.git.enabled else GitSettings(),
        kustomize=KustomizeSettings(
            allow_remote=config.kustomize_allow_remote, isolation=config.kustomize_isolation
        ),
    )


def _creators(result: RunResult | None) -> dict[Key, str]:
    """Each object a controller's run created (a child, an attachment, a map's output) and that
    controller: what the review groups under it. An object the manifests hold is theirs,
    whatever owner it names."""
    out: dict[Key, str] = {}
    for pass_ in result.passes if result is not None else []:
        for controller in pass_.controllers:
            for parent in controller.parents:
                for done in parent.actions:
                    action = done.action
                    if action.kind is not ActionKind.CREATE or not done.applied:
                        continue
                    found = (action.resource.group, action.resource.kind)
                    out.setdefault((*found, action.namespace, action.name), controller.name)
    return out
