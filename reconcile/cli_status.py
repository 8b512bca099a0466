"""`reconcile status`: the run records a deployment's runs leave (`--run-record`), read from
the cluster: how the last run of each went."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from reconcile.cli_support import Command, ContextOption, KubeconfigOption
from reconcile.config import ConnectionSettings
from reconcile.status_job import status_job

STATUS_HELP = """\
How the last runs went: the run records (ConfigMaps) that runs write after each run, beside
their Lease (`--lock`, or `--run-record`). Every record of the namespace, or the one named: its
start and end, outcome and exit code, what it changed, its first errors, the git commit it
applied and its shard.

Exit status: 0 every record's run exited 0, 1 one did not, or none was found.
"""

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
    records, text, code = status_job(
        ConnectionSettings(kubeconfig=kubeconfig, context=context), namespace, name
    )
    typer.echo(json.dumps(records, indent=2) if output == "json" else text, nl=output == "json")
    raise typer.Exit(code)
