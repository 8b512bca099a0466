"""Option values converted without typer's pydantic adapters (reconcile/cli/conversion.py):
every option of the three commands is converted directly, to what typer's own adapter gives,
and a value the direct conversion does not take reads exactly as typer refuses it."""

from __future__ import annotations

from enum import Enum
from typing import Any

import pytest
import typer
from typer._coercion import build_runtime_param
from typer.main import get_command

from reconcile.cli.conversion import DirectParam, convert_directly
from reconcile.cli.diff import app as diff_app
from reconcile.cli.run import app as run_app
from reconcile.cli.status import app as status_app

COMMANDS = {"run": run_app, "diff": diff_app, "status": status_app}

TEXTS: list[Any] = ["abc", "", " spaced ", "x\udcff", "-", "ns/name", b"bytes", 3]
FLAGS: list[Any] = [
    True,
    False,
    "yes",
    " No ",
    "",
    "TRUE",
    "tRuE",
    "on",
    "0",
    "2",
    "maybe",
    1,
    0,
    "x\udcff",
]
NUMBERS = ["5", "0", "-1", "1.5", "1m", "90s", "1h30m", "500ms", "0s", "", "x", "1e400", "nan"]
DRY_RUN = ["client", "server", "none", "true", "FALSE", "1", "bogus", ""]


def _values(param: Any) -> list[Any]:
    descriptor = param.type_descriptor
    annotation = descriptor.annotation
    leaf = getattr(annotation, "__args__", (annotation,))[0]
    values: list[Any]
    if isinstance(leaf, type) and issubclass(leaf, Enum) and descriptor.parameter_info.parser:
        values = DRY_RUN
    elif isinstance(leaf, type) and issubclass(leaf, Enum):
        members = list(leaf)
        values = [*members, *(m.value for m in members), *(m.value.upper() for m in members)]
        values += ["bogus", "", 1]
    elif descriptor.parameter_info.parser is not None:
        values = [*NUMBERS, "/tmp/x", "~/x"]
    elif leaf is bool:
        values = FLAGS
    else:
        values = TEXTS
    if param.multiple:
        return [None, (), "a", *[(v,) for v in values], tuple(v for v in values if v is not None)]
    return [None, *values]


def _outcome(runtime: Any, value: Any, param: Any, ctx: Any) -> tuple[str, Any]:
    try:
        converted = runtime.coerce(value, param=param, ctx=ctx)
    except Exception as exc:  # the error is compared: type and message
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        return "error", (type(exc), message)
    return "value", (type(converted), converted)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_option_is_converted_directly_and_as_typer_converts_it(name: str) -> None:
    command = get_command(COMMANDS[name])
    ctx = typer.Context(command, info_name=name)
    params = command.get_params(ctx)
    convert_directly(params)
    for param in params:
        direct = param.get_runtime_param()  # type: ignore[attr-defined]
        assert isinstance(direct, DirectParam), param.name
        typers = build_runtime_param(param.type_descriptor)  # type: ignore[attr-defined]
        for value in _values(param):
            assert _outcome(direct, value, param, ctx) == _outcome(typers, value, param, ctx), (
                param.name,
                value,
            )
