"""The command-line reference and the exit codes, read from the typer apps themselves: every
command's help text, its options (names, value, default, environment variable, help) grouped
as `--help` groups them, and the exit codes its help states."""

from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass
from enum import Enum
from importlib.metadata import entry_points
from typing import Any

import typer
import typer.main

from docgen.markdown import cell, code, page, table


@dataclass(frozen=True)
class Command:
    words: str  # as typed: `reconcile diff`
    slug: str  # anchors of its options: `diff-max-duration`
    app: Any  # the typer app


def commands() -> list[Command]:
    """The typer apps of the `reconcile` command: every module-level `app` of the package that
    holds its console script's entry point. The run's command (`run`) is `reconcile` itself;
    the others are its words (`reconcile diff`), as the entry point dispatches them."""
    (entry,) = entry_points(group="console_scripts", name="reconcile")
    package = importlib.import_module(entry.module.rsplit(".", 1)[0])
    found = []
    for module in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
        app = getattr(importlib.import_module(module.name), "app", None)
        if not isinstance(app, typer.Typer):
            continue
        (registered,) = app.registered_commands
        name = registered.name or getattr(registered.callback, "__name__", "")
        if name == "run":
            found.append(Command("reconcile", "", app))
        else:
            found.append(Command(f"reconcile {name}", f"{name}-", app))
    found.sort(key=lambda c: (c.slug != "", c.words))
    return found


def _click(command: Command) -> tuple[Any, Any]:
    click_command = typer.main.get_command(command.app)
    return click_command, click_command.make_context(command.words, [], resilient_parsing=True)


def _paragraphs(help_text: str) -> list[list[str]]:
    return [p.splitlines() for p in help_text.strip("\n").split("\n\n")]


def _prose(help_text: str) -> list[str]:
    """The help's paragraphs as Markdown: `\\b` blocks (kept as written) as text blocks, the
    exit codes left to their own page."""
    out: list[str] = []
    for lines in _paragraphs(help_text):
        if lines[0].startswith("\b"):
            out += ["```text", *(line for line in lines[1:]), "```", ""]
        elif not lines[0].startswith(("Exit codes:", "Exit status:")):
            out += [" ".join(" ".join(lines).split()), ""]
    return out


_DURATION = "DURATION"


def _duration(seconds: float) -> str:
    """`5m`, `90s`, `500ms`: a duration's default as `--help` shows it."""
    if seconds < 1:
        return f"{seconds * 1000:g}ms"
    if seconds != int(seconds):
        return f"{seconds:g}s"
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return "".join(f"{n}{unit}" for n, unit in ((hours, "h"), (minutes, "m"), (secs, "s")) if n)


def _metavar(param: Any, ctx: Any, metavars: dict[str, str]) -> str:
    if param.is_flag:
        return ""
    if param.name in metavars:
        return metavars[param.name]
    if param.metavar:
        return str(param.metavar)
    shown = str(param.display_type(ctx) or "").strip("<>")
    if "|" in shown:
        return shown  # the choices
    return {"str": "TEXT", "Path": "PATH", "float": "NUMBER", "int": "N", "list[str]": "TEXT"}.get(
        shown, shown.upper() or "VALUE"
    )


def _default(param: Any, metavar: str) -> str:
    value = param.default
    if value is None or value is False or (isinstance(value, (list, tuple)) and not value):
        return ""
    if param.is_flag:
        if param.secondary_opts:
            return str(param.opts[0] if value is True else param.secondary_opts[0])
        return "on"
    if isinstance(value, Enum):
        return str(value.value)
    if metavar == _DURATION and isinstance(value, (int, float)):
        return _duration(float(value))
    return str(value)


def _envvar(param: Any, ctx: Any) -> str:
    if isinstance(param.envvar, str):
        return param.envvar
    if getattr(param, "allow_from_autoenv", False) and ctx.auto_envvar_prefix and param.name:
        return f"{ctx.auto_envvar_prefix}_{param.name.upper()}"
    return ""


def option_rows(command: Command) -> list[tuple[str, dict[str, str]]]:
    """Each visible option (and argument) of `command`, with the `--help` panel it is in."""
    click_command, ctx = _click(command)
    panels: dict[str, tuple[str, ...]] = getattr(click_command, "panels", {})
    metavars: dict[str, str] = getattr(click_command, "metavars", {})
    panel_of = {name: panel for panel, names in panels.items() for name in names}
    rows: list[tuple[str, dict[str, str]]] = []
    for param in click_command.get_params(ctx):
        if getattr(param, "hidden", False) or param.name == "help":
            continue
        if param.param_type_name == "argument":
            name = param.metavar or param.name.upper()
            rows.append(("Arguments", _row(name, name.lower(), "", param, ctx, "")))
            continue
        metavar = _metavar(param, ctx, metavars)
        names = ", ".join(sorted(param.opts, key=len))
        if param.secondary_opts:
            names += " / " + ", ".join(param.secondary_opts)
        longest = max(param.opts, key=len).lstrip("-")
        panel = panel_of.get(param.name, "Other options" if panels else "Options")
        shown = f"{names} {metavar}".strip()
        rows.append((panel, _row(shown, longest, _default(param, metavar), param, ctx, metavar)))
    return rows


def _row(
    shown: str, anchor: str, default: str, param: Any, ctx: Any, metavar: str
) -> dict[str, str]:
    return {
        "shown": shown,
        "anchor": anchor,
        "default": default,
        "env": _envvar(param, ctx),
        "help": " ".join((param.help or "").split()),
    }


def cli_page() -> str:
    body: list[str] = []
    for command in commands():
        click_command, _ = _click(command)
        body += [f"## `{command.words}`", "", *_prose(click_command.help or "")]
        panels: dict[str, Any] = getattr(click_command, "panels", {})
        grouped: dict[str, list[dict[str, str]]] = {"Arguments": [], **{p: [] for p in panels}}
        for panel, row in option_rows(command):
            grouped.setdefault(panel, []).append(row)
        for panel, rows in grouped.items():
            if not rows:
                continue
            body += [f"### {command.words}: {panel.lower()}", ""]
            body += table(
                ["Option", "Default", "Environment variable", "Meaning"],
                (
                    [
                        f'<a id="{command.slug}{r["anchor"]}"></a>{code(r["shown"])}',
                        code(r["default"]) if r["default"] else "",
                        code(r["env"]) if r["env"] else "",
                        r["help"],
                    ]
                    for r in rows
                ),
            )
            body.append("")
    return page(
        "Command line",
        "Every command and option, as the program's own `--help` has them. An option's "
        "environment variable sets it too (the command line wins); a repeatable option's "
        "variable takes several values separated by spaces. How values are read (durations, "
        "names, paths) is in [the reference's introduction](index.md#option-values).",
        body,
    )


# `0 nothing pending (...); 1 errors (...)` and `0 no object differs, 2 some do, 1 ...`: a
# code (or `130 / 143`) where a clause starts
_CLAUSE = re.compile(r"(?:^|[;,] )(\d+(?: / \d+)*) ")


def exit_codes(help_text: str) -> list[tuple[str, str]]:
    """The (code, meaning) pairs of a help's `Exit codes:` (or `Exit status:`) paragraph."""
    for lines in _paragraphs(help_text):
        text = " ".join(" ".join(lines).split())
        for lead in ("Exit codes: ", "Exit status: "):
            if text.startswith(lead):
                stated = text[len(lead) :].rstrip(".")
                starts = list(_CLAUSE.finditer(stated))
                return [
                    (m.group(1), stated[m.end() : nxt.start() if nxt else None].strip())
                    for m, nxt in zip(starts, [*starts[1:], None], strict=True)
                ]
    raise SystemExit(f"no exit codes in this help text:\n{help_text}")


def exit_codes_page() -> str:
    body: list[str] = []
    for command in commands():
        click_command, _ = _click(command)
        body += [f"## `{command.words}`", ""]
        body += table(
            ["Code", "Meaning"],
            ([code(c), cell(m)] for c, m in exit_codes(click_command.help or "")),
        )
        body.append("")
    return page(
        "Exit codes",
        "Each command's exit codes, as its `--help` states them. `reconcile` follows "
        "`terraform plan -detailed-exitcode`: a usage error is 1, never 2, so that a CI step "
        "never reads a typo as pending changes.",
        body,
    )
