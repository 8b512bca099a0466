"""The options of the run (`reconcile` without a command), declared once: each with its help
text and parser as an `...Option` type the command's signature names (`cli.run`), and
`RunOptions`, their values as typer converted them, by parameter name, which `run_config`
turns into the run's configuration."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reconcile import __version__
from reconcile.cli.support import (
    ContextOption,
    KubeconfigOption,
    LogFormatOption,
    LogLevelOption,
    OnlyControllerOption,
    StdoutReport,
    parse_dry_run,
)
from reconcile.cli.values import optional_decimal, path_value, seconds, whole_number
from reconcile.config import ApplyStrategyName, DryRunMode, KustomizeIsolation
from reconcile.records import dataclass
from reconcile.releases import DEFAULT_VERSION, supported_versions


def _version(value: bool) -> None:
    if value:
        typer.echo(f"reconcile {__version__}")
        raise typer.Exit(0)


QpsOption = Annotated[
    float | None,
    typer.Option(
        help="A fixed client-side limit on API requests per second (0: no limit). Default: "
        "adaptive, from 50 per second, doubling while the server keeps up and halving on "
        "429, 503 or slow answers.",
        parser=optional_decimal,
    ),
]

BurstOption = Annotated[
    int, typer.Option(help="Requests allowed at once above --qps.", parser=whole_number(1))
]

RequestTimeoutOption = Annotated[
    float,
    typer.Option(
        "--request-timeout",
        help="How long one API request may take before it gives up (e.g. 30, 30s).",
        parser=seconds(),
    ),
]

ControllersOption = Annotated[
    # str, not Path: click splits a Path list from the environment on ":", and the
    # documentation promises whitespace (RECONCILE_MANIFESTS="apps crds") as for every list.
    list[str] | None,
    typer.Option(
        "--controllers",
        help="A YAML file or directory of controllers (repeatable). They replace cluster "
        "controllers of the same name. A directory holding a kustomization is rendered "
        "by kustomize; - reads standard input.",
    ),
]

ClusterControllersOption = Annotated[
    bool,
    typer.Option(
        "--cluster-controllers/--no-cluster-controllers",
        help="Also run the controllers defined in the cluster.",
    ),
]

DryRunOption = Annotated[
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
]

WorkersOption = Annotated[int, typer.Option(help="Parents synced at once.", parser=whole_number(1))]

MaxDurationOption = Annotated[
    float,
    typer.Option(
        "--max-duration",
        help="The run's wall-clock limit (e.g. 300, 5m): passes continue (waits, resyncs) "
        "within it, and every wait (requests, retries, hooks) is bounded by what is left.",
        parser=seconds(),
    ),
]

ProgressIntervalOption = Annotated[
    float,
    typer.Option(
        "--progress-interval",
        help="Off a terminal, log a progress line every this long while a pass syncs "
        "parents (parents done of total, writes, errors, hook time); 0: never.",
        parser=seconds(allow_zero=True),
    ),
]

PollIntervalOption = Annotated[
    float,
    typer.Option(
        "--poll-interval",
        help="Between passes while waiting on the cluster (e.g. 2, 500ms).",
        parser=seconds(),
    ),
]

LocalOption = Annotated[
    list[str] | None,  # str: see --controllers
    typer.Option(
        "--local",
        help="Run against an in-process cluster seeded from these manifests (CRDs, "
        "controllers, parents, anything else) instead of a real one. Repeatable; "
        "kustomizations and - as for --controllers.",
    ),
]

OutputDirOption = Annotated[
    Path | None,
    typer.Option(
        "--output-dir",
        parser=path_value,
        help="With --local: write the resulting objects as YAML here (a GitOps preview).",
    ),
]

KubernetesVersionOption = Annotated[
    str | None,
    typer.Option(
        "--kubernetes-version",
        help=f"With --local: the Kubernetes release the in-process cluster behaves as "
        f"(resources served, schemas, defaults): {', '.join(supported_versions())}. "
        f"Default: {DEFAULT_VERSION}.",
    ),
]

ManifestsOption = Annotated[
    list[str] | None,  # str: see --controllers
    typer.Option(
        "--manifests",
        help="Apply the objects in these files or directories before the controllers run "
        "(CRDs first, then Namespaces, then the rest), recorded in an ApplySet. Repeatable; "
        "kustomizations and - as for --controllers.",
    ),
]

PruneOption = Annotated[
    bool,
    typer.Option(
        "--prune",
        help="With --manifests: delete the ApplySet's objects that left the manifests "
        "(never an object it did not apply).",
    ),
]

PruneAllowShrinkOption = Annotated[
    bool,
    typer.Option(
        "--prune-allow-shrink",
        help="With --prune: allow a prune that deletes more than half of the ApplySet's "
        "members (refused otherwise: it reads as a wrong or broken input).",
    ),
]

PruneCascadeOption = Annotated[
    bool,
    typer.Option(
        "--prune-cascade",
        help="With --prune: also prune a Namespace or CRD that still holds objects outside "
        "the ApplySet, deleting them with it (held back otherwise, and named).",
    ),
]

ApplysetOption = Annotated[
    str,
    typer.Option(
        "--applyset",
        help="With --manifests: the ApplySet's parent ConfigMap, [NAMESPACE/]NAME.",
    ),
]

LockOption = Annotated[
    str | None,
    typer.Option(
        "--lock",
        help="Hold this coordination.k8s.io Lease, [NAMESPACE/]NAME, while the run writes: "
        "a run that finds it held by another exits 0 without doing anything. --dry-run "
        "takes no lock.",
    ),
]

RunRecordOption = Annotated[
    str | None,
    typer.Option(
        "--run-record",
        help="After each run (not dry runs), write what it did to this ConfigMap, "
        "[NAMESPACE/]NAME (default: beside the --lock Lease, under its name; none without "
        "a lock): start, end, outcome, exit code, changes, first errors, git commit, "
        "shard. `reconcile status` prints it. none: write no record.",
    ),
]

ShardOption = Annotated[
    str | None,
    typer.Option(
        "--shard",
        help="Sync only this process's share of the parents: INDEX/COUNT (0/4 to 3/4), "
        "chosen by a stable hash of each parent's uid, or auto/COUNT in an Indexed Job "
        "(INDEX from JOB_COMPLETION_INDEX). Each shard takes its own --lock.",
    ),
]

TargetLabelSelectorOption = Annotated[
    str | None,
    typer.Option(
        "--target-label-selector",
        help="Run only the controllers (CompositeController, DecoratorController, "
        "MapController objects) whose labels match this selector, e.g. team=payments.",
    ),
]

AllowedHookHostsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--allowed-hook-hosts",
        help="Call webhooks only on these hosts: host, host:port or *.domain (repeatable, "
        "or several separated by commas or spaces). A hook on another host fails without "
        "being called. Set it in a preview of untrusted changes.",
    ),
]

ApplyStrategyOption = Annotated[
    ApplyStrategyName,
    typer.Option(
        "--apply-strategy",
        help="How children (and --manifests) are written: client-side, a three-way merge "
        "with the last-applied annotation as Metacontroller does it, or server-side apply "
        "(field manager reconcile, no annotation; objects written client-side before move "
        "over on their next write).",
        case_sensitive=False,
    ),
]

ForceConflictsOption = Annotated[
    bool,
    typer.Option(
        "--force-conflicts",
        help="With --apply-strategy server-side: take over fields other managers own "
        "instead of reporting the conflict on the child.",
    ),
]

MetricsPushgatewayOption = Annotated[
    str | None,
    typer.Option(
        "--metrics-pushgateway",
        help="Push the run's Prometheus metrics to this Pushgateway (job reconcile).",
    ),
]

MetricsFileOption = Annotated[
    Path | None,
    typer.Option(
        "--metrics-file",
        parser=path_value,
        help="Write the run's Prometheus metrics to this file (node-exporter textfile "
        "collector format, replaced atomically).",
    ),
]

GitUrlOption = Annotated[
    str | None,
    typer.Option(
        "--git",
        help="Read --controllers, --manifests and --local inside this repository (https, "
        "ssh, file:// or a path). Credentials come from the environment only "
        "(RECONCILE_GIT_TOKEN[_FILE], RECONCILE_GIT_SSH_KEY_FILE, RECONCILE_GIT_KNOWN_HOSTS).",
    ),
]

GitRefOption = Annotated[
    str | None,
    typer.Option(
        "--git-ref",
        help="With --git: a branch, tag, commit or revision (HEAD~1, origin/main; default: the "
        "remote's default branch).",
    ),
]

GitCacheOption = Annotated[
    Path | None,
    typer.Option(
        "--git-cache",
        parser=path_value,
        help="With --git: where clones are kept between runs (default: ~/.cache/reconcile/git).",
    ),
]

RecursiveOption = Annotated[
    bool,
    typer.Option(
        "--recursive",
        "-R",
        help="Read --local, --manifests and --controllers directories recursively.",
    ),
]

KustomizeAllowRemoteOption = Annotated[
    bool,
    typer.Option(
        "--kustomize-allow-remote",
        help="Let a kustomization name remote bases and resources (URLs, git "
        "repositories), fetched by kustomize when it renders: refused otherwise, since the "
        "run would apply whatever that server says.",
    ),
]

KustomizeIsolationOption = Annotated[
    KustomizeIsolation,
    typer.Option(
        "--kustomize-isolation",
        case_sensitive=False,
        help="How kustomize is kept off the network without --kustomize-allow-remote: "
        "auto (a network namespace of its own, else a seccomp filter refusing it sockets, "
        "else kustomize is not run), namespace, seccomp, or none (on the network: only "
        "the kustomization's fields are checked).",
    ),
]

ReportFormatOption = Annotated[
    StdoutReport,
    typer.Option(
        "--report-format",
        case_sensitive=False,
        help="The report on standard output (none: only the log on standard error).",
    ),
]

ReportFileOption = Annotated[
    list[str] | None,
    typer.Option(
        "--report-file",
        help="Also write the report to a file (repeatable): FORMAT:PATH, or PATH whose "
        "extension picks the format (.json, .md, else text). Markdown is appended, as "
        "$GITHUB_STEP_SUMMARY expects.",
    ),
]

VerboseOption = Annotated[
    bool,
    typer.Option(
        "--verbose",
        help="The text report in full: every parent (not a count of those in sync) and "
        "every hook call (not only failed ones).",
    ),
]

ColorOption = Annotated[
    bool | None,
    typer.Option(
        "--color/--no-color",
        help="Colour the text report (default: when standard output is a terminal).",
    ),
]

ShowVersionOption = Annotated[
    bool,
    typer.Option(
        "--version",
        callback=_version,
        is_eager=True,
        allow_from_autoenv=False,
        help="Print the version and exit.",
    ),
]


@dataclass(frozen=True)
class RunOptions:
    """Every option of the run as typer converted it (the command's `ctx.params`)."""

    kubeconfig: KubeconfigOption
    context: ContextOption
    qps: QpsOption
    burst: BurstOption
    request_timeout: RequestTimeoutOption
    log_level: LogLevelOption
    log_format: LogFormatOption
    controllers: ControllersOption
    controller: OnlyControllerOption
    cluster_controllers: ClusterControllersOption
    dry_run: DryRunOption
    workers: WorkersOption
    max_duration: MaxDurationOption
    progress_interval: ProgressIntervalOption
    poll_interval: PollIntervalOption
    local: LocalOption
    output_dir: OutputDirOption
    kubernetes_version: KubernetesVersionOption
    manifests: ManifestsOption
    prune: PruneOption
    prune_allow_shrink: PruneAllowShrinkOption
    prune_cascade: PruneCascadeOption
    applyset: ApplysetOption
    lock: LockOption
    run_record: RunRecordOption
    shard: ShardOption
    target_label_selector: TargetLabelSelectorOption
    allowed_hook_hosts: AllowedHookHostsOption
    apply_strategy: ApplyStrategyOption
    force_conflicts: ForceConflictsOption
    metrics_pushgateway: MetricsPushgatewayOption
    metrics_file: MetricsFileOption
    git_url: GitUrlOption
    git_ref: GitRefOption
    git_cache: GitCacheOption
    recursive: RecursiveOption
    kustomize_allow_remote: KustomizeAllowRemoteOption
    kustomize_isolation: KustomizeIsolationOption
    report_format: ReportFormatOption
    report_file: ReportFileOption
    verbose: VerboseOption
    color: ColorOption
    show_version: ShowVersionOption
