"""`reconcile diff BASE HEAD`: the command line of the cluster-free comparison."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reconcile.cli.support import (
    Command,
    LogFormatOption,
    LogLevelOption,
    OnlyControllerOption,
    StdoutReport,
    check_standard_input,
    parse_hosts_option,
    report_targets,
)
from reconcile.cli.values import (
    check_controller_names,
    check_git_options,
    needs,
    path_value,
    seconds,
    whole_number,
)
from reconcile.config import (
    GitSettings,
    KustomizeIsolation,
    LogFormat,
    LoggingSettings,
    LogLevel,
    ReportTarget,
)
from reconcile.job.diff import DiffConfig, diff_job
from reconcile.releases import DEFAULT_VERSION, supported_versions

DIFF_HELP = """\
What a change does, without a cluster: BASE and HEAD (two directories, or with --git two
refs of one repository) are each run to convergence in an in-process cluster, as
`reconcile --local` runs them, and the final states are compared object by object: created,
deleted, and the fields that change, each object shown as it is (never as an annotation says
it is). Noise is left out: last-applied annotations that truly record their object (one that
claims anything else is shown), server-set metadata, defaults both sides share, status
(unless --status), and the ControllerRevisions and Events runs keep.

Exit status: 0 no object differs, 2 some do, 1 an error (the comparison is incomplete).

\b
Examples:
  reconcile diff ../platform-main . --local apps --controllers controllers
  reconcile diff --git https://github.com/acme/platform main my-branch \\
    --local apps --controllers controllers
"""

app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={
        "help_option_names": ["-h", "--help"],
        "auto_envvar_prefix": "RECONCILE_DIFF",
    },
)


@app.command(help=DIFF_HELP, cls=Command)  # usage errors exit 1: 2 means "differs"
def diff(
    base: Annotated[
        str,
        typer.Argument(
            help="The base: a directory, or with --git a branch, tag, commit or revision (HEAD~1).",
            metavar="BASE",
            envvar="RECONCILE_DIFF_BASE",
            show_envvar=True,
        ),
    ],
    head: Annotated[
        str,
        typer.Argument(
            help="The head (the change): a directory, or with --git a ref.",
            metavar="HEAD",
            envvar="RECONCILE_DIFF_HEAD",
            show_envvar=True,
        ),
    ],
    local: Annotated[
        list[str] | None,
        typer.Option(
            "--local",
            "--manifests",
            help="Manifests to run, inside each side (repeatable; default: the whole side).",
        ),
    ] = None,
    controllers: Annotated[
        list[str] | None,
        typer.Option(
            "--controllers",
            help="A file or directory of controllers inside each side (repeatable); controllers "
            "in the --local manifests run too.",
        ),
    ] = None,
    controller: OnlyControllerOption = None,
    recursive: Annotated[
        bool,
        typer.Option("-R", "--recursive", help="Read directories recursively."),
    ] = False,
    status: Annotated[
        bool, typer.Option("--status", help="Compare the objects' status too.")
    ] = False,
    git_url: Annotated[
        str | None,
        typer.Option(
            "--git",
            help="BASE and HEAD are refs of this repository (https, ssh, or file://); paths "
            "are read inside it.",
        ),
    ] = None,
    git_cache: Annotated[
        Path | None,
        typer.Option(
            "--git-cache",
            help="With --git: where clones are kept between runs.",
            parser=path_value,
        ),
    ] = None,
    kubernetes_version: Annotated[
        str | None,
        typer.Option(
            "--kubernetes-version",
            help=f"The release the in-process cluster behaves as (default {DEFAULT_VERSION}; "
            f"one of {', '.join(supported_versions())}).",
        ),
    ] = None,
    max_duration: Annotated[
        float,
        typer.Option(
            "--max-duration",
            help="Both runs' time budget (seconds, or 30s, 5m).",
            parser=seconds(),
            metavar="DURATION",
        ),
    ] = 300.0,
    workers: Annotated[
        int, typer.Option(help="Parents synced at once.", parser=whole_number(1))
    ] = 8,
    allowed_hook_hosts: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-hook-hosts",
            help="The only hosts webhooks may call (repeatable; see `reconcile --help`).",
            envvar="RECONCILE_ALLOWED_HOOK_HOSTS",
        ),
    ] = None,
    kustomize_allow_remote: Annotated[
        bool,
        typer.Option(
            "--kustomize-allow-remote",
            help="Let kustomizations name remote bases and resources (refused otherwise).",
            envvar="RECONCILE_KUSTOMIZE_ALLOW_REMOTE",
        ),
    ] = False,
    kustomize_isolation: Annotated[
        KustomizeIsolation | None,
        typer.Option(
            "--kustomize-isolation",
            case_sensitive=False,
            help="How kustomize is kept off the network: auto, namespace, seccomp or none "
            "(see `reconcile --help`).",
            envvar="RECONCILE_KUSTOMIZE_ISOLATION",
        ),
    ] = None,
    report_format: Annotated[
        StdoutReport,
        typer.Option(
            "--report-format", case_sensitive=False, help="The report on standard output."
        ),
    ] = StdoutReport.TEXT,
    report_file: Annotated[
        list[str] | None,
        typer.Option(
            "--report-file",
            help="Also write the report to a file (repeatable): FORMAT:PATH (text, markdown, "
            "json), or PATH whose suffix says (.md, .json).",
        ),
    ] = None,
    log_level: LogLevelOption = LogLevel.WARNING,
    log_format: LogFormatOption = LogFormat.TEXT,
) -> None:
    _check_sides(base, head, local, controllers, git_url, git_cache)
    _check_options(controller, kustomize_isolation, kustomize_allow_remote, kubernetes_version)
    targets = _writable_report_targets(report_format, report_file)
    config = DiffConfig(
        base=base,
        head=head,
        local=tuple(local or (".",)),
        controllers=tuple(controllers or ()),
        only_controllers=frozenset(controller or ()),
        recursive=recursive,
        include_status=status,
        git=GitSettings(url=git_url, cache_dir=str(git_cache) if git_cache else None),
        kubernetes_version=kubernetes_version,
        max_duration=max_duration,
        workers=workers,
        allowed_hook_hosts=parse_hosts_option(allowed_hook_hosts),
        kustomize_allow_remote=kustomize_allow_remote,
        kustomize_isolation=kustomize_isolation or KustomizeIsolation.AUTO,
        reports=tuple(targets),
    )
    from reconcile.cli.logs import configure_logging  # not loaded for --help

    configure_logging(LoggingSettings(level=log_level, format=log_format))
    _, code = diff_job(config)
    raise typer.Exit(int(code))


def _check_sides(
    base: str,
    head: str,
    local: list[str] | None,
    controllers: list[str] | None,
    git_url: str | None,
    git_cache: Path | None,
) -> None:
    """What each side is read from: its paths (standard input cannot serve both), the
    repository, and BASE and HEAD themselves."""
    check_standard_input({"--local": local or [], "--controllers": controllers or []}, sides=2)
    check_git_options(git_url, None, git_cache)
    for ref, what in ((base, "BASE"), (head, "HEAD")):
        _check_side(ref, what, git=git_url is not None)


def _check_options(
    controller: list[str] | None,
    kustomize_isolation: KustomizeIsolation | None,
    kustomize_allow_remote: bool,
    kubernetes_version: str | None,
) -> None:
    check_controller_names(controller)
    needs(
        kustomize_isolation not in (None, KustomizeIsolation.AUTO),
        "--kustomize-isolation",
        "kustomize off the network, which --kustomize-allow-remote turns off",
        not kustomize_allow_remote,
    )
    if kubernetes_version is not None and kubernetes_version not in supported_versions():
        raise typer.BadParameter(
            f"{kubernetes_version!r} is not one of {', '.join(supported_versions())}",
            param_hint="--kubernetes-version",
        )


def _writable_report_targets(
    report_format: StdoutReport, report_file: list[str] | None
) -> list[ReportTarget]:
    """The reports asked for, each checked writable: a report that cannot be written is found
    before the runs, not after."""
    targets = report_targets(report_format, report_file)
    from reconcile.job.outputs import OutputError, check_report_files  # not loaded for --help

    try:
        check_report_files(tuple(targets))
    except OutputError as exc:
        raise typer.BadParameter(
            str(exc).removeprefix("--report-file "), param_hint="--report-file"
        ) from None
    return targets


def _check_side(value: str, what: str, *, git: bool) -> None:
    """BASE or HEAD: a ref git reads as one revision (with --git), or a directory's path."""
    if not value.strip():
        raise typer.BadParameter("is empty", param_hint=what)
    if not git:
        return
    from reconcile.gitsource import GitSourceError
    from reconcile.gitsource.checks import check_ref

    try:
        check_ref(value)
    except GitSourceError as exc:
        raise typer.BadParameter(str(exc).removeprefix("--git-ref "), param_hint=what) from None
