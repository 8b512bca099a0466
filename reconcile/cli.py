"""The `reconcile` command line: parses options into a `RunConfig`, runs, picks the exit code.

No Kubernetes logic lives here.
"""

from __future__ import annotations

import logging
from typing import Annotated

import typer

from reconcile import __version__
from reconcile.cluster.connect import connect_live
from reconcile.cluster.errors import ApiError
from reconcile.config import ConnectionSettings, LogFormat, LoggingSettings, LogLevel, RunConfig
from reconcile.logs import configure_logging

log = logging.getLogger("reconcile")

HELP = (
    "Run Metacontroller-style controllers once against a cluster, then exit.\n\n"
    "The connection follows kubectl: --kubeconfig, then $KUBECONFIG, then ~/.kube/config, "
    "then the in-cluster service account when running in a Pod."
)

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"reconcile {__version__}")
        raise typer.Exit(0)


@app.command(help=HELP)
def run(
    kubeconfig: Annotated[
        str | None,
        typer.Option(
            "--kubeconfig",
            help="Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).",
        ),
    ] = None,
    context: Annotated[
        str | None, typer.Option("--context", help="The kubeconfig context to use.")
    ] = None,
    qps: Annotated[
        float,
        typer.Option(help="Client-side limit on API requests per second (0: no limit)."),
    ] = 50.0,
    burst: Annotated[int, typer.Option(help="Requests allowed at once above --qps.")] = 100,
    request_timeout: Annotated[
        float, typer.Option("--request-timeout", help="Seconds before one API request gives up.")
    ] = 30.0,
    log_level: Annotated[
        LogLevel, typer.Option("--log-level", case_sensitive=False, help="Log verbosity.")
    ] = LogLevel.INFO,
    log_format: Annotated[
        LogFormat,
        typer.Option("--log-format", case_sensitive=False, help="Log lines as text or JSON."),
    ] = LogFormat.TEXT,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
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
    )
    configure_logging(config.logging)
    try:
        cluster = connect_live(config.connection)
        cluster.discover("v1", "namespaces")
    except ApiError as exc:
        log.error("cannot reach the cluster: %s", exc.message)
        raise typer.Exit(1) from exc
    log.info("connected", extra={"requests": cluster.stats.by_verb()})


def main() -> None:
    app(prog_name="reconcile")
