"""`reconcile` (the run): its options, laid out in its help (`RunCommand`) and declared in its
signature (`run_options`), checked and made a `RunConfig` (`run_config`), then the job, whose
exit code is the process's."""

from __future__ import annotations

import typer

from reconcile.cli.help import DURATION
from reconcile.cli.run_config import run_config
from reconcile.cli.run_options import (
    AllowedHookHostsOption,
    ApplysetOption,
    ApplyStrategyOption,
    BurstOption,
    ClusterControllersOption,
    ColorOption,
    ControllersOption,
    DryRunOption,
    ForceConflictsOption,
    GitCacheOption,
    GitRefOption,
    GitUrlOption,
    KubernetesVersionOption,
    KustomizeAllowRemoteOption,
    KustomizeIsolationOption,
    LocalOption,
    LockOption,
    ManifestsOption,
    MaxDurationOption,
    MetricsFileOption,
    MetricsPushgatewayOption,
    OutputDirOption,
    PollIntervalOption,
    ProgressIntervalOption,
    PruneAllowShrinkOption,
    PruneCascadeOption,
    PruneOption,
    QpsOption,
    RecursiveOption,
    ReportFileOption,
    ReportFormatOption,
    RequestTimeoutOption,
    RunOptions,
    RunRecordOption,
    ShardOption,
    ShowVersionOption,
    TargetLabelSelectorOption,
    VerboseOption,
    WorkersOption,
)
from reconcile.cli.support import (
    HELP,
    Command,
    ContextOption,
    KubeconfigOption,
    LogFormatOption,
    LogLevelOption,
    OnlyControllerOption,
    StdoutReport,
)
from reconcile.config import ApplyStrategyName, KustomizeIsolation, LogFormat, LogLevel

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    # Every option can also come from the environment: RECONCILE_<OPTION> (`--max-duration` is
    # RECONCILE_MAX_DURATION), so a CronJob sets its options through one ConfigMap.
    context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "RECONCILE"},
)


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
    qps: QpsOption = None,
    burst: BurstOption = 100,
    request_timeout: RequestTimeoutOption = 30.0,
    log_level: LogLevelOption = LogLevel.INFO,
    log_format: LogFormatOption = LogFormat.TEXT,
    controllers: ControllersOption = None,
    controller: OnlyControllerOption = None,
    cluster_controllers: ClusterControllersOption = True,
    dry_run: DryRunOption = None,
    workers: WorkersOption = 8,
    max_duration: MaxDurationOption = 300.0,
    progress_interval: ProgressIntervalOption = 10.0,
    poll_interval: PollIntervalOption = 2.0,
    local: LocalOption = None,
    output_dir: OutputDirOption = None,
    kubernetes_version: KubernetesVersionOption = None,
    manifests: ManifestsOption = None,
    prune: PruneOption = False,
    prune_allow_shrink: PruneAllowShrinkOption = False,
    prune_cascade: PruneCascadeOption = False,
    applyset: ApplysetOption = "default/reconcile",
    lock: LockOption = None,
    run_record: RunRecordOption = None,
    shard: ShardOption = None,
    target_label_selector: TargetLabelSelectorOption = None,
    allowed_hook_hosts: AllowedHookHostsOption = None,
    apply_strategy: ApplyStrategyOption = ApplyStrategyName.CLIENT_SIDE,
    force_conflicts: ForceConflictsOption = False,
    metrics_pushgateway: MetricsPushgatewayOption = None,
    metrics_file: MetricsFileOption = None,
    git_url: GitUrlOption = None,
    git_ref: GitRefOption = None,
    git_cache: GitCacheOption = None,
    recursive: RecursiveOption = False,
    kustomize_allow_remote: KustomizeAllowRemoteOption = False,
    kustomize_isolation: KustomizeIsolationOption = KustomizeIsolation.AUTO,
    report_format: ReportFormatOption = StdoutReport.TEXT,
    report_file: ReportFileOption = None,
    verbose: VerboseOption = False,
    color: ColorOption = None,
    show_version: ShowVersionOption = False,
) -> None:
    # The options are declared in the signature for typer; what they mean is run_config's.
    config = run_config(RunOptions(**ctx.params), given=lambda name: _given(ctx, name))
    from reconcile.cli.logs import configure_logging  # as the run's modules, below

    configure_logging(config.logging)
    from reconcile.job.app import main_job  # the run's modules: not loaded for --help or --version

    _, code = main_job(config)
    raise typer.Exit(int(code))


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether an option was given (on the command line or in its variable), not defaulted."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")
