"""`reconcile status`: the run records a deployment's runs leave (`--run-record`), read from
the cluster: how the last run of each went."""

from __future__ import annotations

import json
import re
from typing import Annotated

import typer

from reconcile.cli.support import Command, ContextOption, KubeconfigOption
from reconcile.config import ConnectionSettings
from reconcile.job.status import status_job

STATUS_HELP = """\
How the last runs went: the run records (ConfigMaps) that runs write after each run, beside
their Lease (`--lock`, or `--run-record`). Every record of the namespace, or the one named: its
start and end, outcome and exit code, what it changed, its first errors, the git commit it
applied and its shard.

Only a ConfigMap a run wrote as its record (labelled reconcile.dev/run-record=true) is read as
one: another of the name is said not to be a record, and its data is never shown.

Exit status: 0 every record's run exited 0, 1 one did not, or none was found.
"""


_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def _is_label(value: str) -> bool:
    """A namespace's name: an RFC 1123 label, as the API server reads it."""
    return len(value) <= 63 and _LABEL.fullmatch(value) is not None


def _is_subdomain(value: str) -> bool:
    """A ConfigMap's name: an RFC 1123 subdomain."""
    return len(value) <= 253 and _SUBDOMAIN.fullmatch(value) is not None


app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.command(help=STATUS_HELP, cls=Command)
def status(
    name: Annotated[
        str | None,
        typer.Argument(
            help="One record's name (default: every record of the namespace).", metavar="NAME"
        ),
    ] = None,
    namespace: Annotated[
        str,
        typer.Option("-n", "--namespace", help="Where the records are (the CronJob's namespace)."),
    ] = "reconcile",
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    output: Annotated[
        str,
        typer.Option("-o", "--output", help="text or json."),
    ] = "text",
) -> None:
    if output not in ("text", "json"):
        raise typer.BadParameter(f"{output!r}: text or json", param_hint="--output")
    if not _is_label(namespace):
        raise typer.BadParameter(
            f"{namespace!r} is not a namespace (a lowercase RFC 1123 label)", param_hint="-n"
        )
    if name is not None and not _is_subdomain(name):
        raise typer.BadParameter(
            f"{name!r} is not the name of a ConfigMap (a lowercase RFC 1123 subdomain)",
            param_hint="NAME",
        )
    records, text, code = status_job(
        ConnectionSettings(kubeconfig=kubeconfig, context=context), namespace, name
    )
    typer.echo(json.dumps(records, indent=2) if output == "json" else text, nl=output == "json")
    raise typer.Exit(code)
