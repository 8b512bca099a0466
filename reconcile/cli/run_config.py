"""The run's options (`RunOptions`) checked and made its `RunConfig`. A usage error (exit 1)
names the option: a value it cannot take, or one that means nothing with the others given."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from reconcile.cli.run_options import RunOptions
from reconcile.cli.support import (
    check_combinations,
    check_standard_input,
    parse_hosts_option,
    parse_selector_option,
    parse_shard_option,
    report_targets,
)
from reconcile.cli.values import (
    check_controller_names,
    check_git_options,
    check_meaning,
    check_paths,
    named_paths,
)
from reconcile.config import (
    ApplyStrategyName,
    ConnectionSettings,
    DryRunMode,
    GitSettings,
    KustomizeSettings,
    LocalSettings,
    LogFormat,
    LoggingSettings,
    MetricsSettings,
    ReconcileSettings,
    ReportSettings,
    ReportTarget,
    RunConfig,
)


def run_config(options: RunOptions, given: Callable[[str], bool]) -> RunConfig:
    """The configuration the options ask for; `given`: whether an option was given (on the
    command line or in its variable) rather than defaulted."""
    o = options
    reconcile = _reconcile_settings(o)
    targets = report_targets(o.report_format, o.report_file)
    config = RunConfig(
        connection=ConnectionSettings(
            kubeconfig=o.kubeconfig,
            context=o.context,
            qps=o.qps,
            burst=o.burst,
            request_timeout=o.request_timeout,
        ),
        logging=LoggingSettings(level=o.log_level, format=o.log_format),
        reconcile=reconcile,
        metrics=MetricsSettings(
            pushgateway=o.metrics_pushgateway or None,
            file=str(o.metrics_file) if o.metrics_file else None,
        ),
        git=GitSettings(
            url=o.git_url,
            ref=o.git_ref,
            cache_dir=str(o.git_cache) if o.git_cache else None,
        ),
        local=LocalSettings(
            manifest_paths=named_paths(o.local, git=bool(o.git_url)),
            output_dir=str(o.output_dir) if o.output_dir else None,
            kubernetes_version=o.kubernetes_version,
        ),
        kustomize=KustomizeSettings(
            allow_remote=o.kustomize_allow_remote, isolation=o.kustomize_isolation
        ),
        report=ReportSettings(
            targets=tuple(targets),
            color=o.color if o.color is not None else _color_default(),
            verbose=o.verbose,
        ),
        progress=sys.stderr.isatty() and o.log_format is LogFormat.TEXT,
        progress_interval=o.progress_interval,
    )
    _check(o, given, targets)
    return config


def _reconcile_settings(o: RunOptions) -> ReconcileSettings:
    return ReconcileSettings(
        controller_paths=named_paths(o.controllers, git=bool(o.git_url)),
        only_controllers=frozenset(o.controller or []),
        controllers_from_cluster=o.cluster_controllers,
        dry_run=o.dry_run in (DryRunMode.CLIENT, DryRunMode.SERVER),
        server_dry_run=o.dry_run is DryRunMode.SERVER,
        workers=o.workers,
        max_duration=o.max_duration,
        poll_interval=o.poll_interval,
        recursive=o.recursive,
        apply_paths=named_paths(o.manifests, git=bool(o.git_url)),
        prune=o.prune,
        prune_allow_shrink=o.prune_allow_shrink,
        prune_cascade=o.prune_cascade,
        applyset=o.applyset if "/" in o.applyset else f"default/{o.applyset}",
        lock=(o.lock if "/" in o.lock else f"default/{o.lock}") if o.lock else None,
        run_record=_namespaced(o.run_record),
        shard=parse_shard_option(o.shard),
        target_label_selector=parse_selector_option(o.target_label_selector),
        allowed_hook_hosts=parse_hosts_option(o.allowed_hook_hosts),
        server_side_apply=o.apply_strategy is ApplyStrategyName.SERVER_SIDE,
        force_conflicts=o.force_conflicts,
    )


def _check(o: RunOptions, given: Callable[[str], bool], targets: list[ReportTarget]) -> None:
    """What the options say together: each check names the option it refuses."""
    check_standard_input(
        {
            "--controllers": o.controllers or [],
            "--local": o.local or [],
            "--manifests": o.manifests or [],
        }
    )
    check_combinations(
        local=bool(o.local),
        output_dir=o.output_dir is not None,
        manifests=bool(o.manifests),
        prune=o.prune,
        prune_allow_shrink=o.prune_allow_shrink,
        prune_cascade=o.prune_cascade,
        applyset=o.applyset,
        lock=o.lock,
        run_record=o.run_record,
        git=bool(o.git_url),
        git_ref=o.git_ref,
        git_cache=o.git_cache,
        kubernetes_version=o.kubernetes_version,
    )
    check_meaning(
        paths=bool(o.local or o.manifests or o.controllers),
        local=bool(o.local),
        manifests=bool(o.manifests),
        git=bool(o.git_url),
        recursive=o.recursive,
        applyset_given=given("applyset"),
        force_conflicts=o.force_conflicts,
        server_side=o.apply_strategy is ApplyStrategyName.SERVER_SIDE,
        kubeconfig=o.kubeconfig,
        context=o.context,
        kustomize_remote=o.kustomize_allow_remote,
        kustomize_isolation=o.kustomize_isolation if given("kustomize_isolation") else None,
    )
    check_git_options(o.git_url, o.git_ref, o.git_cache)
    check_paths(
        {
            "--report-file": [t.path for t in targets if t.path is not None],
            "--kubeconfig": [o.kubeconfig] if o.kubeconfig is not None else [],
        }
    )
    check_controller_names(o.controller)


def _namespaced(name: str | None) -> str | None:
    if name is None or name.strip().lower() in ("", "none"):
        return None if name is None else "none"
    return name if "/" in name else f"default/{name}"


def _color_default() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")
