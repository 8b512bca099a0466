"""`--help` as plain text that fits the terminal (80 columns in a pipe): options grouped
into panels, names never cut, durations shown as durations, each option's environment
variable and default in brackets. No rich rendering: it is the slow part of `--help`."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any

DURATION = "DURATION"

# The shapes typer gives a value, as people read them.
_METAVARS = {
    "<str>": "TEXT",
    "<path>": "PATH",
    "<float>": "NUMBER",
    "<int>": "N",
    "<int range>": "N",
    "<list[str]>": "TEXT",
}


def format_duration(seconds: float) -> str:
    """`5m`, `90s`, `1h30m`, `500ms`: as the documentation and options.env write them."""
    if seconds <= 0 or math.isinf(seconds):
        return "0" if seconds == 0 else str(seconds)
    if seconds < 1:
        return f"{seconds * 1000:g}ms"
    whole = int(seconds)
    if whole != seconds:
        return f"{seconds:g}s"
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return "".join(f"{n}{unit}" for n, unit in ((hours, "h"), (minutes, "m"), (secs, "s")) if n)


NAME_COLUMN = 30  # the options' column; a longer name puts its help on the next line


def write_help(
    command: Any,
    ctx: Any,
    formatter: Any,
    panels: Mapping[str, Sequence[str]],
    metavars: Mapping[str, str] | None = None,
) -> None:
    """The whole help of `command` into click's `formatter` (its width: the terminal's, at
    most 80); an option goes to the first panel naming it (by its parameter name), the others
    to "Other options". Words are never split at hyphens (`--max-duration` stays whole)."""
    width = max(formatter.width, 40)
    lines = [
        " ".join(command.collect_usage_pieces(ctx)).join(("Usage: " + ctx.command_path + " ", ""))
    ]
    lines += _paragraphs(command.help or "", width)
    panel_of = {name: panel for panel, names in panels.items() for name in names}
    arguments: list[tuple[str, str]] = []
    grouped: dict[str, list[tuple[str, str]]] = {panel: [] for panel in panels}
    for param in command.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        if getattr(param, "param_type_name", "") == "argument":
            arguments.append(_argument_record(param, ctx))
            continue
        panel = panel_of.get(param.name, "Other options" if panels else "Options")
        grouped.setdefault(panel, []).append(_option_record(param, ctx, metavars or {}))
    for title, rows in (("Arguments", arguments), *grouped.items()):
        if rows:
            lines += ["", f"{title}:"]
            for name, help_text in rows:
                lines += _row(name, help_text, width)
    formatter.write("\n".join(lines) + "\n")


def _paragraphs(text: str, width: int) -> list[str]:
    """Help text: blank-line separated paragraphs, wrapped and indented by two; a paragraph
    that starts with a `\\b` line is kept as written (examples)."""
    out: list[str] = []
    for paragraph in text.strip("\n").split("\n\n"):
        out.append("")
        if paragraph.startswith("\b"):
            out += ["  " + line for line in paragraph.splitlines()[1:]]
            continue
        out += _wrap(" ".join(paragraph.split()), width - 2, "  ")
    return out


def _row(name: str, help_text: str, width: int) -> list[str]:
    indent = " " * (NAME_COLUMN + 4)
    wrapped = _wrap(help_text, width - len(indent), "")
    if len(name) > NAME_COLUMN:
        return [f"  {name}", *(indent + line for line in wrapped)]
    first = f"  {name:<{NAME_COLUMN}}  " + (wrapped[0] if wrapped else "")
    return [first.rstrip(), *(indent + line for line in wrapped[1:])]


def _wrap(text: str, width: int, indent: str) -> list[str]:
    wrapper = textwrap.TextWrapper(
        width=max(width, 20), break_on_hyphens=False, break_long_words=False
    )
    return [indent + line for line in wrapper.wrap(text)] or []


def _argument_record(param: Any, ctx: Any) -> tuple[str, str]:
    name = param.metavar or param.name.upper()
    extras = [f"env: {param.envvar}"] if isinstance(param.envvar, str) else []
    return name, _with_extras(param.help or "", extras)


def _option_record(param: Any, ctx: Any, metavars: Mapping[str, str]) -> tuple[str, str]:
    names = ", ".join(sorted(param.opts, key=len))
    metavar = "" if param.is_flag else metavars.get(param.name) or _metavar(param, ctx)
    if param.secondary_opts:
        names += " / " + ", ".join(param.secondary_opts)
    if metavar:
        names += f" {metavar}"
    extras = []
    default = _default(param, metavar)
    if default:
        extras.append(f"default: {default}")
    envvar = _envvar(param, ctx)
    if envvar:
        extras.append(f"env: {envvar}")
    return names, _with_extras(param.help or "", extras)


def _metavar(param: Any, ctx: Any) -> str:
    if param.metavar:
        return str(param.metavar)
    shown = str(param.display_type(ctx) or "")
    if shown in _METAVARS:
        return _METAVARS[shown]
    if shown.startswith("<") and "|" in shown:  # choices
        return shown.strip("<>")
    return shown.strip("<>").upper() or "VALUE"


def _default(param: Any, metavar: str) -> str:
    value = param.default
    if value is None or value is False or (isinstance(value, (list, tuple)) and not value):
        return ""
    if param.is_flag:
        return (
            "on"
            if value is True and not param.secondary_opts
            else (param.opts[0] if value is True else "")
        )
    if isinstance(value, Enum):
        return str(value.value)
    if metavar == DURATION and isinstance(value, (int, float)):
        return format_duration(float(value))
    return str(value)


def _envvar(param: Any, ctx: Any) -> str:
    if isinstance(param.envvar, str):
        return param.envvar
    if param.allow_from_autoenv and ctx.auto_envvar_prefix and param.name:
        if param.name in ("help", "show_version"):
            return ""
        return f"{ctx.auto_envvar_prefix}_{param.name.upper()}"
    return ""


def _with_extras(help_text: str, extras: list[str]) -> str:
    text = " ".join(help_text.split())
    return f"{text}  [{'; '.join(extras)}]" if extras else text
