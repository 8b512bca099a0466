"""What the command line is made of besides its option list: the help text, usage errors that
exit 1, option values (durations, names, the shard and selector options), and the combinations
of options that need one another (each a usage error naming the option)."""

from __future__ import annotations

import os
import re
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, ClassVar

import typer
from typer.core import TyperCommand

from reconcile.cli.conversion import convert_directly
from reconcile.cli.help import write_help
from reconcile.cli.values import check_paths
from reconcile.config import DryRunMode, LogFormat, LogLevel, ReportTarget, Shard, parse_shard

# typer vendors click: its usage errors are BadParameter's base class, not `click.UsageError`.
UsageError: type[Exception] = typer.BadParameter.__mro__[1]

HELP = (
    "Run Metacontroller-style controllers once against a cluster, then exit.\n\n"
    "The connection follows kubectl: --kubeconfig, then $KUBECONFIG, then ~/.kube/config, "
    "then the in-cluster service account when running in a Pod. --local runs against an "
    "in-process cluster seeded from manifests instead.\n\n"
    "Exit codes: 0 nothing pending (converged, or everything decided was applied); "
    "1 errors (usage errors included, and a run stopped by its --max-duration mid-pass); "
    "2 changes pending (--dry-run only); 130 / 143 interrupted by SIGINT / SIGTERM (the "
    "report of what was done is still written).\n\n"
    "Durations (--max-duration, --poll-interval, --request-timeout) are seconds (90, 0.5) or "
    "Go durations (90s, 5m, 1h30m), at most a year.\n\n"
    "Two more commands: `reconcile diff BASE HEAD` compares what two refs or directories do, "
    "without a cluster; `reconcile status` prints the run records of a deployment "
    "(`reconcile diff --help`, `reconcile status --help`)."
)


# Options that several commands share, declared once.
KubeconfigOption = Annotated[
    str | None,
    typer.Option(
        "--kubeconfig",
        help="Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).",
    ),
]
ContextOption = Annotated[
    str | None, typer.Option("--context", help="The kubeconfig context to use.")
]
OnlyControllerOption = Annotated[
    list[str] | None,
    typer.Option("--controller", help="Run only this controller (repeatable)."),
]
LogLevelOption = Annotated[
    LogLevel, typer.Option("--log-level", case_sensitive=False, help="Log verbosity.")
]
LogFormatOption = Annotated[
    LogFormat,
    typer.Option("--log-format", case_sensitive=False, help="Log lines as text or JSON."),
]


class Command(TyperCommand):
    """Usage errors exit 1, not click's 2: 2 means "changes pending" (terraform's scheme), and
    a CI step must never read a typo as pending changes. Help is plain text in `panels`
    (`help`)."""

    panels: ClassVar[dict[str, tuple[str, ...]]] = {}
    metavars: ClassVar[dict[str, str]] = {}

    def format_help(self, ctx: Any, formatter: Any) -> None:
        write_help(self, ctx, formatter, self.panels, self.metavars)

    def make_context(
        self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any
    ) -> Any:
        args = bare_dry_run(args, self.params)
        try:
            return super().make_context(info_name, args, parent, **extra)
        except UsageError as exc:
            exc.exit_code = 1  # type: ignore[attr-defined]
            raise

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        convert_directly(self.get_params(ctx))  # no pydantic adapter per option: `conversion`
        return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except UsageError as exc:
            exc.exit_code = 1  # type: ignore[attr-defined]
            raise


DRY_RUN = "--dry-run"
# kubectl's legacy spellings (and what RECONCILE_DRY_RUN held while --dry-run was a flag)
_DRY_RUN_WORDS = {
    **dict.fromkeys(("1", "true", "t", "yes", "y", "on"), DryRunMode.CLIENT),
    **dict.fromkeys(("0", "false", "f", "no", "n", "off"), DryRunMode.NONE),
}


def bare_dry_run(args: list[str], params: list[Any]) -> list[str]:
    """`--dry-run` given alone means `--dry-run=client`, as in kubectl: the command line's
    parser knows no option with an optional value, so the bare option is spelt out (a
    `--dry-run` that is the value of another option, or follows `--`, is left alone; one
    followed by a mode's name takes it as its value)."""
    takes_value = {
        opt
        for param in params
        if getattr(param, "param_type_name", "") == "option"
        and not getattr(param, "is_flag", False)
        and not getattr(param, "count", False)
        for opt in param.opts
    }
    out: list[str] = []
    value_next = False
    for index, arg in enumerate(args):
        given = arg
        if value_next:
            value_next = False
        elif arg == "--":
            return out + args[index:]
        elif arg == DRY_RUN:
            # `--dry-run server` reads as `--dry-run=server` (the command takes no arguments)
            following = args[index + 1] if index + 1 < len(args) else ""
            if following in tuple(DryRunMode):
                value_next = True
            else:
                given = f"{DRY_RUN}={DryRunMode.CLIENT.value}"
        elif arg in takes_value:
            value_next = True
        out.append(given)
    return out


def parse_dry_run(value: str) -> DryRunMode:
    """`--dry-run` / RECONCILE_DRY_RUN: client, server or none (also true / false)."""
    text = str(value).strip().lower()
    if text in _DRY_RUN_WORDS:
        return _DRY_RUN_WORDS[text]
    try:
        return DryRunMode(text)
    except ValueError:
        raise typer.BadParameter(
            f"{value!r} is not a dry-run mode: client, server or none (--dry-run alone is client)"
        ) from None


_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
# dot-separated DNS labels, as the API server's IsDNS1123Subdomain reads a name
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def applyset_name(value: str) -> bool:
    """`[NAMESPACE/]NAME` of an object: a DNS subdomain (at most 253 characters) in a
    namespace that is a DNS label (at most 63)."""
    namespace, slash, name = value.rpartition("/")
    if slash and not namespace:
        return False  # `/name`: an empty namespace
    return (
        bool(_DNS_SUBDOMAIN.fullmatch(name))
        and len(name) <= 253
        and (not namespace or (bool(_DNS_LABEL.fullmatch(namespace)) and len(namespace) <= 63))
    )


class StdoutReport(StrEnum):
    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"
    NONE = "none"


def parse_shard_option(text: str | None) -> Shard:
    if text is None:
        return Shard()
    try:
        return parse_shard(text, os.environ.get("JOB_COMPLETION_INDEX"))
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--shard") from exc


def parse_selector_option(text: str | None) -> str | None:
    if text is None:
        return None
    # imported here, as the run's other modules: --help needs neither reader
    from reconcile.objects.selectors import SelectorError, parse_label_selector

    try:
        parse_label_selector(text)
    except SelectorError as exc:
        raise typer.BadParameter(str(exc), param_hint="--target-label-selector") from exc
    return text


def parse_hosts_option(values: list[str] | None) -> tuple[str, ...] | None:
    if not values:
        return None
    from reconcile.specs.hook_hosts import parse_host_patterns

    try:
        return parse_host_patterns(values)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--allowed-hook-hosts") from exc


def check_standard_input(paths: dict[str, list[str]], *, sides: int = 1) -> None:
    """`-` (standard input) is read once: one option, once, may name it; and none where
    `sides` (the two of `reconcile diff`) would each read it."""
    from reconcile.files import STANDARD_INPUT  # the readers: not loaded for --help

    check_paths(paths)
    naming = [option for option, given in paths.items() if STANDARD_INPUT in given]
    if naming and sides > 1:
        raise typer.BadParameter(
            "standard input (-) would be read by both sides, the base and the head, and can be "
            "read only once: give a file (./- for a file named -)",
            param_hint=naming[0],
        )
    if len(naming) > 1:
        raise typer.BadParameter(
            f"{' and '.join(naming)} both read standard input (-); it can be read only once",
            param_hint=naming[-1],
        )
    for option in naming:
        if paths[option].count(STANDARD_INPUT) > 1:
            raise typer.BadParameter(
                f"{option} names standard input (-) more than once", param_hint=option
            )


def check_combinations(
    *,
    local: bool,
    output_dir: bool,
    manifests: bool,
    prune: bool,
    prune_allow_shrink: bool,
    prune_cascade: bool,
    applyset: str,
    lock: str | None,
    git: bool,
    git_ref: str | None,
    git_cache: Path | None,
    kubernetes_version: str | None,
    run_record: str | None = None,
) -> None:
    """Options that need another one, and names that cannot be what they name."""
    if output_dir and not local:
        raise typer.BadParameter("--output-dir needs --local", param_hint="--output-dir")
    if prune and not manifests:
        raise typer.BadParameter("--prune needs --manifests", param_hint="--prune")
    for flag, name in (
        (prune_allow_shrink, "--prune-allow-shrink"),
        (prune_cascade, "--prune-cascade"),
    ):
        if flag and not prune:
            raise typer.BadParameter(f"{name} needs --prune", param_hint=name)
    if not applyset_name(applyset):
        raise typer.BadParameter(
            f"{applyset!r} is not [NAMESPACE/]NAME of a ConfigMap", param_hint="--applyset"
        )
    if lock is not None and not applyset_name(lock):
        raise typer.BadParameter(
            f"{lock!r} is not [NAMESPACE/]NAME of a Lease", param_hint="--lock"
        )
    if (
        run_record is not None
        and run_record.strip().lower() != "none"
        and not applyset_name(run_record)
    ):
        raise typer.BadParameter(
            f"{run_record!r} is not [NAMESPACE/]NAME of a ConfigMap (or none)",
            param_hint="--run-record",
        )
    if local and run_record is not None and run_record.strip().lower() != "none":
        raise typer.BadParameter(
            "a run record is a ConfigMap in a real cluster, and --local has none "
            "(--output-dir keeps what a --local run leaves)",
            param_hint="--run-record",
        )
    for given, option in ((git_ref, "--git-ref"), (git_cache, "--git-cache")):
        if given is not None and not git:
            raise typer.BadParameter(f"{option} needs --git", param_hint=option)
    if kubernetes_version is not None:
        if not local:
            raise typer.BadParameter(
                "--kubernetes-version needs --local", param_hint="--kubernetes-version"
            )
        from reconcile.cluster.memory import UnsupportedVersion, release

        try:
            release(kubernetes_version)
        except UnsupportedVersion as exc:
            raise typer.BadParameter(str(exc), param_hint="--kubernetes-version") from exc


def report_targets(
    report_format: StdoutReport, report_file: list[str] | None
) -> list[ReportTarget]:
    """The reports asked for: standard output's (unless none), then each --report-file."""
    from reconcile.report.targets import parse_report_file  # not loaded for --help

    try:
        targets = [parse_report_file(value) for value in report_file or []]
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--report-file") from exc
    if report_format is not StdoutReport.NONE:
        targets.insert(0, ReportTarget(report_format.value))
    return targets
