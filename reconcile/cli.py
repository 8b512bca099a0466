"""The `reconcile` command line: parses options into a `RunConfig`, runs, picks the exit code.

No Kubernetes logic lives here.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from reconcile import __version__
from reconcile.cli_help import DURATION
from reconcile.cli_support import (
    HELP,
    Command,
    ContextOption,
    KubeconfigOption,
    LogFormatOption,
    LogLevelOption,
    OnlyControllerOption,
    StdoutReport,
    check_combinations,
    check_standard_input,
    parse_dry_run,
    parse_hosts_option,
    parse_selector_option,
    parse_shard_option,
)
from reconcile.cli_values import (
    check_controller_names,
    check_git_options,
    check_meaning,
    check_paths,
    named_paths,
    optional_decimal,
    path_value,
    seconds,
    whole_number,
)
from reconcile.config import (
    ApplyStrategyName,
    ConnectionSettings,
    DryRunMode,
    GitSettings,
    KustomizeIsolation,
    KustomizeSettings,
    LocalSettings,
    LogFormat,
    LoggingSettings,
    LogLevel,
    MetricsSettings,
    ReconcileSettings,
    ReportSettings,
    ReportTarget,
    RunConfig,
)
from reconcile.releases import DEFAULT_VERSION, supported_versions

log = logging.getLogger("reconcile")

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    # Every option can also come from the environment: RECONCILE_<OPTION> (`--max-duration` is
    # RECONCILE_MAX_DURATION), so a CronJob sets its options through one ConfigMap.
    context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "RECONCILE"},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"reconcile {__version__}")
        raise typer.Exit(0)


class RunCommand(Command):
    panels = {  # noqa: RUF012 (a class-level table, never changed)
        "Connection": ("kubeconfig", "context", "qps", "burst", "request_timeout"),
        "Sources (controllers and objects)": (
            "controllers",
            "controller",
            "cluster_controllers",
            "target_label_selector",
            "local",
            "manifests",
            "recursive",
            "kustomize_allow_remote",
            "kustomize_isolation",
            "git_url",
            "git_ref",
            "git_cache",
        ),
        "Behaviour": (
            "dry_run",
            "max_duration",
            "poll_interval",
            "workers",
            "shard",
            "lock",
            "prune",
            "prune_allow_shrink",
            "prune_cascade",
            "applyset",
            "apply_strategy",
            "force_conflicts",
            "allowed_hook_hosts",
            "kubernetes_version",
        ),
        "Output": (
            "report_format",
            "report_file",
            "verbose",
            "color",
            "output_dir",
            "run_record",
            "metrics_pushgateway",
            "metrics_file",
            "progress_interval",
            "log_level",
            "log_format",
        ),
    }
    metavars = {  # noqa: RUF012
        "kubeconfig": "PATH",
        "context": "NAME",
        "controllers": "PATH",
        "controller": "NAME",
        "local": "PATH",
        "manifests": "PATH",
        "output_dir": "DIR",
        "kubernetes_version": "X.Y",
        "applyset": "[NAMESPACE/]NAME",
        "lock": "[NAMESPACE/]NAME",
        "run_record": "[NAMESPACE/]NAME",
        "shard": "INDEX/COUNT",
        "target_label_selector": "SELECTOR",
        "allowed_hook_hosts": "HOST",
        "metrics_pushgateway": "URL",
        "metrics_file": "PATH",
        "git_url": "URL",
        "git_ref": "REF",
        "git_cache": "DIR",
        "report_file": "[FORMAT:]PATH",
        "max_duration": DURATION,
        "poll_interval": DURATION,
        "request_timeout": DURATION,
        "progress_interval": DURATION,
    }


@app.command(help=HELP, cls=RunCommand)
def run(
    ctx: typer.Context,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    qps: Annotated[
        float | None,
        typer.Option(
            help="A fixed client-side limit on API requests per second (0: no limit). Default: "
            "adaptive, from 50 per second, doubling while the server keeps up and halving on "
            "429, 503 or slow answers.",
            parser=optional_decimal,
        ),
    ] = None,
    burst: Annotated[
        int, typer.Option(help="Requests allowed at once above --qps.", parser=whole_number(1))
    ] = 100,
    request_timeout: Annotated[
        float,
        typer.Option(
            "--request-timeout",
            help="How long one API request may take before it gives up (e.g. 30, 30s).",
            parser=seconds(),
        ),
    ] = 30.0,
    log_level: LogLevelOption = LogLevel.INFO,
    log_format: LogFormatOption = LogFormat.TEXT,
    controllers: Annotated[
        # str, not Path: click splits a Path list from the environment on ":", and the
        # README promises whitespace (RECONCILE_MANIFESTS="apps crds") as for every list.
        list[str] | None,
        typer.Option(
            "--controllers",
            help="A YAML file or directory of controllers (repeatable). They replace cluster "
            "controllers of the same name. A directory holding a kustomization is rendered "
            "by kustomize; - reads standard input.",
        ),
    ] = None,
    controller: OnlyControllerOption = None,
    cluster_controllers: Annotated[
        bool,
        typer.Option(
            "--cluster-controllers/--no-cluster-controllers",
            help="Also run the controllers defined in the cluster.",
        ),
    ] = True,
    dry_run: Annotated[
        DryRunMode | None,
        typer.Option(
            "--dry-run",
            metavar="[=client|server|none]",
            help="Call the hooks and report what would change, in one pass. --dry-run (or "
            "=client) sends no writes; =server sends each write as a dry run (dryRun=All), so "
            "the API server's admission, schema and validation refuse what they would refuse, "
            "and nothing is persisted (RBAC must allow the writes); =none is a real run.",
            parser=parse_dry_run,
        ),
    ] = None,
    workers: Annotated[
        int, typer.Option(help="Parents synced at once.", parser=whole_number(1))
    ] = 8,
    max_duration: Annotated[
        float,
        typer.Option(
            "--max-duration",
            help="The run's wall-clock limit (e.g. 300, 5m): passes continue (waits, resyncs) "
            "within it, and every wait (requests, retries, hooks) is bounded by what is left.",
            parser=seconds(),
        ),
    ] = 300.0,
    progress_interval: Annotated[
        float,
        typer.Option(
            "--progress-interval",
            help="Off a terminal, log a progress line every this long while a pass syncs "
            "parents (parents done of total, writes, errors, hook time); 0: never.",
            parser=seconds(allow_zero=True),
        ),
    ] = 10.0,
    poll_interval: Annotated[
        float,
        typer.Option(
            "--poll-interval",
            help="Between passes while waiting on the cluster (e.g. 2, 500ms).",
            parser=seconds(),
        ),
    ] = 2.0,
    local: Annotated[
        list[str] | None,  # str: see --controllers
        typer.Option(
            "--local",
            help="Run against an in-process cluster seeded from these manifests (CRDs, "
            "controllers, parents, anything else) instead of a real one. Repeatable; "
            "kustomizations and - as for --controllers.",
        ),
    ] = None,
    output_dir: Annotated[
        Path | None,
        typer.Option(
            "--output-dir",
            parser=path_value,
            help="With --local: write the resulting objects as YAML here (a GitOps preview).",
        ),
    ] = None,
    kubernetes_version: Annotated[
        str | None,
        typer.Option(
            "--kubernetes-version",
            help=f"With --local: the Kubernetes release the in-process cluster behaves as "
            f"(resources served, schemas, defaults): {', '.join(supported_versions())}. "
            f"Default: {DEFAULT_VERSION}.",
        ),
    ] = None,
    manifests: Annotated[
        list[str] | None,  # str: see --controllers
        typer.Option(
            "--manifests",
            help="Apply the objects in these files or directories before the controllers run "
            "(CRDs first, then Namespaces, then the rest), recorded in an ApplySet. Repeatable; "
            "kustomizations and - as for --controllers.",
        ),
    ] = None,
    prune: Annotated[
        bool,
        typer.Option(
            "--prune",
            help="With --manifests: delete the ApplySet's objects that left the manifests "
            "(never an object it did not apply).",
        ),
    ] = False,
    prune_allow_shrink: Annotated[
        bool,
        typer.Option(
            "--prune-allow-shrink",
            help="With --prune: allow a prune that deletes more than half of the ApplySet's "
            "members (refused otherwise: it reads as a wrong or broken input).",
        ),
    ] = False,
    prune_cascade: Annotated[
        bool,
        typer.Option(
            "--prune-cascade",
            help="With --prune: also prune a Namespace or CRD that still holds objects outside "
            "the ApplySet, deleting them with it (held back otherwise, and named).",
        ),
    ] = False,
    applyset: Annotated[
        str,
        typer.Option(
            "--applyset",
            help="With --manifests: the ApplySet's parent ConfigMap, [NAMESPACE/]NAME.",
        ),
    ] = "default/reconcile",
    lock: Annotated[
        str | None,
        typer.Option(
            "--lock",
            help="Hold this coordination.k8s.io Lease, [NAMESPACE/]NAME, while the run writes: "
            "a run that finds it held by another exits 0 without doing anything. --dry-run "
            "takes no lock.",
        ),
    ] = None,
    run_record: Annotated[
        str | None,
        typer.Option(
            "--run-record",
            help="After each run (not dry runs), write what it did to this ConfigMap, "
            "[NAMESPACE/]NAME (default: beside the --lock Lease, under its name; none without "
            "a lock): start, end, outcome, exit code, changes, first errors, git commit, "
            "shard. `reconcile status` prints it. none: write no record.",
        ),
    ] = None,
    shard: Annotated[
        str | None,
        typer.Option(
            "--shard",
            help="Sync only this process's share of the parents: INDEX/COUNT (0/4 to 3/4), "
            "chosen by a stable hash of each parent's uid, or auto/COUNT in an Indexed Job "
            "(INDEX from JOB_COMPLETION_INDEX). Each shard takes its own --lock.",
        ),
    ] = None,
    target_label_selector: Annotated[
        str | None,
        typer.Option(
            "--target-label-selector",
            help="Run only the controllers (CompositeController, DecoratorController, "
            "MapController objects) whose labels match this selector, e.g. team=payments.",
        ),
    ] = None,
    allowed_hook_hosts: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-hook-hosts",
            help="Call webhooks only on these hosts: host, host:port or *.domain (repeatable, "
            "or several separated by commas or spaces). A hook on another host fails without "
            "being called. Set it in a preview of untrusted changes.",
        ),
    ] = None,
    apply_strategy: Annotated[
        ApplyStrategyName,
        typer.Option(
            "--apply-strategy",
            help="How children (and --manifests) are written: client-side, a three-way merge "
            "with the last-applied annotation as Metacontroller does it, or server-side apply "
            "(field manager reconcile, no annotation; objects written client-side before move "
            "over on their next write).",
            case_sensitive=False,
        ),
    ] = ApplyStrategyName.CLIENT_SIDE,
    force_conflicts: Annotated[
        bool,
        typer.Option(
            "--force-conflicts",
            help="With --apply-strategy server-side: take over fields other managers own "
            "instead of reporting the conflict on the child.",
        ),
    ] = False,
    metrics_pushgateway: Annotated[
        str | None,
        typer.Option(
            "--metrics-pushgateway",
            help="Push the run's Prometheus metrics to this Pushgateway (job reconcile).",
        ),
    ] = None,
    metrics_file: Annotated[
        Path | None,
        typer.Option(
            "--metrics-file",
            parser=path_value,
            help="Write the run's Prometheus metrics to this file (node-exporter textfile "
            "collector format, replaced atomically).",
        ),
    ] = None,
    git_url: Annotated[
        str | None,
        typer.Option(
            "--git",
            help="Read --controllers, --manifests and --local inside this repository (https, "
            "ssh, file:// or a path). Credentials come from the environment only "
            "(RECONCILE_GIT_TOKEN[_FILE], RECONCILE_GIT_SSH_KEY_FILE, RECONCILE_GIT_KNOWN_HOSTS).",
        ),
    ] = None,
    git_ref: Annotated[
        str | None,
        typer.Option(
            "--git-ref",
            help="With --git: a branch, tag, commit or revision (HEAD~1, origin/main; default: the "
            "remote's default branch).",
        ),
    ] = None,
    git_cache: Annotated[
        Path | None,
        typer.Option(
            "--git-cache",
            parser=path_value,
            help="With --git: where clones are kept between runs (default: "
            "~/.cache/reconcile/git).",
        ),
    ] = None,
    recursive: Annotated[
        bool,
        typer.Option(
            "--recursive",
            "-R",
            help="Read --local, --manifests and --controllers directories recursively.",
        ),
    ] = False,
    kustomize_allow_remote: Annotated[
        bool,
        typer.Option(
            "--kustomize-allow-remote",
            help="Let a kustomization name remote bases and resources (URLs, git "
            "repositories), fetched by kustomize when it renders: refused otherwise, since the "
            "run would apply whatever that server says.",
        ),
    ] = False,
    kustomize_isolation: Annotated[
        KustomizeIsolation,
        typer.Option(
            "--kustomize-isolation",
            case_sensitive=False,
            help="How kustomize is kept off the network without --kustomize-allow-remote: "
            "auto (a network namespace of its own, else a seccomp filter refusing it sockets, "
            "else kustomize is not run), namespace, seccomp, or none (on the network: only "
            "the kustomization's fields are checked).",
        ),
    ] = KustomizeIsolation.AUTO,
    report_format: Annotated[
        StdoutReport,
        typer.Option(
            "--report-format",
            case_sensitive=False,
            help="The report on standard output (none: only the log on standard error).",
        ),
    ] = StdoutReport.TEXT,
    report_file: Annotated[
        list[str] | None,
        typer.Option(
            "--report-file",
            help="Also write the report to a file (repeatable): FORMAT:PATH, or PATH whose "
            "extension picks the format (.json, .md, else text). Markdown is appended, as "
            "$GITHUB_STEP_SUMMARY expects.",
        ),
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            help="The text report in full: every parent (not a count of those in sync) and "
            "every hook call (not only failed ones).",
        ),
    ] = False,
    color: Annotated[
        bool | None,
        typer.Option(
            "--color/--no-color",
            help="Colour the text report (default: when standard output is a terminal).",
        ),
    ] = None,
    show_version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version,
            is_eager=True,
            allow_from_autoenv=False,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    config = RunConfig(
        connection=ConnectionSettings(
            kubeconfig=kubeconfig,
            context=context,
            qps=qps,
            burst=burst,
            request_timeout=request_timeout,
        ),
        logging=LoggingSettings(level=log_level, format=log_format),
        reconcile=ReconcileSettings(
            controller_paths=named_paths(controllers, git=bool(git_url)),
            only_controllers=frozenset(controller or []),
            controllers_from_cluster=cluster_controllers,
            dry_run=dry_run in (DryRunMode.CLIENT, DryRunMode.SERVER),
            server_dry_run=dry_run is DryRunMode.SERVER,
            workers=workers,
            max_duration=max_duration,
            poll_interval=poll_interval,
            recursive=recursive,
            apply_paths=named_paths(manifests, git=bool(git_url)),
            prune=prune,
            prune_allow_shrink=prune_allow_shrink,
            prune_cascade=prune_cascade,
            applyset=applyset if "/" in applyset else f"default/{applyset}",
            lock=(lock if "/" in lock else f"default/{lock}") if lock else None,
            run_record=_namespaced(run_record),
            shard=parse_shard_option(shard),
            target_label_selector=parse_selector_option(target_label_selector),
            allowed_hook_hosts=parse_hosts_option(allowed_hook_hosts),
            server_side_apply=apply_strategy is ApplyStrategyName.SERVER_SIDE,
            force_conflicts=force_conflicts,
        ),
        metrics=MetricsSettings(
            pushgateway=metrics_pushgateway or None,
            file=str(metrics_file) if metrics_file else None,
        ),
        git=GitSettings(
            url=git_url,
            ref=git_ref,
            cache_dir=str(git_cache) if git_cache else None,
        ),
        local=LocalSettings(
            manifest_paths=named_paths(local, git=bool(git_url)),
            output_dir=str(output_dir) if output_dir else None,
            kubernetes_version=kubernetes_version,
        ),
        kustomize=KustomizeSettings(
            allow_remote=kustomize_allow_remote, isolation=kustomize_isolation
        ),
    )
    from reconcile.report.targets import parse_report_file  # not loaded for --help

    try:
        targets = [parse_report_file(value) for value in report_file or []]
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--report-file") from exc
    if report_format is not StdoutReport.NONE:
        targets.insert(0, ReportTarget(report_format.value))
    config = replace(
        config,
        report=ReportSettings(
            targets=tuple(targets),
            color=color if color is not None else _color_default(),
            verbose=verbose,
        ),
        progress=sys.stderr.isatty() and log_format is LogFormat.TEXT,
        progress_interval=progress_interval,
    )
    check_standard_input(
        {"--controllers": controllers or [], "--local": local or [], "--manifests": manifests or []}
    )
    check_combinations(
        local=bool(local),
        output_dir=output_dir is not None,
        manifests=bool(manifests),
        prune=prune,
        prune_allow_shrink=prune_allow_shrink,
        prune_cascade=prune_cascade,
        applyset=applyset,
        lock=lock,
        run_record=run_record,
        git=bool(git_url),
        git_ref=git_ref,
        git_cache=git_cache,
        kubernetes_version=kubernetes_version,
    )
    check_meaning(
        paths=bool(local or manifests or controllers),
        local=bool(local),
        manifests=bool(manifests),
        git=bool(git_url),
        recursive=recursive,
        applyset_given=_given(ctx, "applyset"),
        force_conflicts=force_conflicts,
        server_side=apply_strategy is ApplyStrategyName.SERVER_SIDE,
        kubeconfig=kubeconfig,
        context=context,
        kustomize_remote=kustomize_allow_remote,
        kustomize_isolation=kustomize_isolation if _given(ctx, "kustomize_isolation") else None,
    )
    check_git_options(git_url, git_ref, git_cache)
    check_paths(
        {
            "--report-file": [t.path for t in targets if t.path is not None],
            "--kubeconfig": [kubeconfig] if kubeconfig is not None else [],
        }
    )
    check_controller_names(controller)
    from reconcile.logs import configure_logging  # as the run's modules, below

    configure_logging(config.logging)
    from reconcile.app import main_job  # the run's modules: not loaded for --help or --version

    _, code = main_job(config)
    raise typer.Exit(int(code))


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether an option was given (on the command line or in its variable), not defaulted."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def _namespaced(name: str | None) -> str | None:
    if name is None or name.strip().lower() in ("", "none"):
        return None if name is None else "none"
    return name if "/" in name else f"default/{name}"


def _color_default() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def main() -> None:
    # `reconcile diff` and `reconcile status` are commands of their own; everything else is
    # the run, as it always was (no subcommand to type).
    if sys.argv[1:2] == ["diff"]:
        from reconcile.cli_diff import app as diff_app

        diff_app(args=sys.argv[2:], prog_name="reconcile diff")
        return
    if sys.argv[1:2] == ["status"]:
        from reconcile.cli_status import app as status_app

        status_app(args=sys.argv[2:], prog_name="reconcile status")
        return
    app(prog_name="reconcile")
