"""The environment variables the program reads. Which ones: the options' variables from the
typer apps, and every other name the code reads from its environment, found by reading the
code (`os.environ.get("X")`, `environ["X"]`, `os.getenv`, a name held in a constant or looped
over, and the shell of the action's steps). What each means is said here, once: a variable the
code reads and this table does not describe stops the generation (and so fails the test), as
does one described that the code no longer reads."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import yaml

from docgen.cli_pages import commands, option_rows
from docgen.markdown import code, page, table

ROOT = Path(__file__).resolve().parents[2]
_ENV_NAMES = {"environ", "env", "environment"}
_VARIABLE = re.compile(r"[A-Z][A-Z0-9_]*")

# What each variable means: environment.yaml beside this module.
_MEANINGS = yaml.safe_load((Path(__file__).parent / "environment.yaml").read_text())
PROGRAM: dict[str, str] = _MEANINGS["program"]
INDIRECT: dict[str, str] = _MEANINGS["indirect"]
ACTION: dict[str, str] = _MEANINGS["action"]
# Found by the reading below but not read from the run's environment: the environment a
# process we start is given, as we build it.
NOT_READ = {"GIT_CONFIG_COUNT"}  # git's, in the environment git gets (no GIT_* of the run's)


def _constants(tree: ast.Module) -> dict[str, str]:
    return {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for target in node.targets if isinstance(target, ast.Name)
    }  # fmt: skip


def _is_environment(node: ast.expr) -> bool:
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return name in _ENV_NAMES


def _names(node: ast.expr, constants: dict[str, str], loops: dict[str, list[str]]) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name):
        return loops.get(node.id) or ([constants[node.id]] if node.id in constants else [])
    return []


def python_reads(path: Path) -> set[str]:
    """The variables a module reads from its environment, by name."""
    tree = ast.parse(path.read_text(), str(path))
    constants = _constants(tree)
    loops: dict[str, list[str]] = {}  # a loop variable over a tuple of names
    for node in ast.walk(tree):
        for generator in getattr(node, "generators", []):
            if isinstance(generator.target, ast.Name) and isinstance(generator.iter, ast.Tuple):
                loops[generator.target.id] = [
                    e.value
                    for e in generator.iter.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                ]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            getter = node.func.attr == "get" and _is_environment(node.func.value)
            if getter or node.func.attr == "getenv":
                found.update(_names(node.args[0], constants, loops))
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and _is_environment(node.value)
        ):
            found.update(_names(node.slice, constants, loops))
    return {name for name in found if _VARIABLE.fullmatch(name)}


def scanned(directory: str) -> set[str]:
    return {
        name for path in sorted((ROOT / directory).rglob("*.py")) for name in python_reads(path)
    }


def action_reads() -> tuple[set[str], set[str]]:
    """(the variables the action's step scripts read, those its steps set themselves)."""
    action = yaml.safe_load((ROOT / "github-actions" / "action.yml").read_text())
    read: set[str] = set()
    own: set[str] = set()
    for step in action["runs"]["steps"]:
        own.update(step.get("env") or {})
        read.update(re.findall(r"\$\{?([A-Z][A-Z0-9_]+)", step.get("run", "")))
    return read | scanned("github-actions"), own


def _check(found: set[str], described: set[str], where: str) -> None:
    missing, stale = sorted(found - described), sorted(described - found)
    if missing or stale:
        raise SystemExit(
            f"environment variables in {where}: read but not described: {missing}; described "
            f"but no longer read: {stale} (edit scripts/docgen/environment_page.py)"
        )


def _option_rows() -> Iterator[list[str]]:
    for command in commands():
        for _, row in option_rows(command):
            if row["env"]:
                link = f"[{code(row['shown'])}](cli.md#{command.slug}{row['anchor']})"
                yield [code(row["env"]), f"`{command.words}` {link}"]


def environment_page() -> str:
    options = {r[0].strip("`") for r in _option_rows()}
    indirect = {n for names in INDIRECT for n in names.split(", ")}
    _check(scanned("reconcile") - options - indirect - NOT_READ, set(PROGRAM), "reconcile/")
    read, own = action_reads()
    _check(read - own, set(ACTION), "github-actions/")
    body = [
        "## Options",
        "",
        "Every option of `reconcile` and `reconcile diff` can be set by a variable (the "
        "command line wins). Repeatable options take several values separated by spaces "
        '(`RECONCILE_LOCAL="apps crds"`); flags take `true` or `false`; '
        "`RECONCILE_DRY_RUN` also takes `client`, `server` and `none`. `reconcile status` "
        "reads none.",
        "",
        *table(["Variable", "Sets"], _option_rows()),
        "",
        "## Read by the program",
        "",
        *table(["Variable", "Meaning"], ([code(k), v] for k, v in sorted(PROGRAM.items()))),
        "",
        *table(["Variables", "Meaning"], ([code(k), v] for k, v in INDIRECT.items())),
        "",
        "## Read by the GitHub Action",
        "",
        "Besides the program's own (pass options as `RECONCILE_*` in the step's `env:`), the "
        "action's steps read the runner's variables below. It sets "
        + ", ".join(code(n) for n in sorted(own))
        + " itself, from its inputs, for its own steps.",
        "",
        *table(["Variable", "Meaning"], ([code(k), v] for k, v in sorted(ACTION.items()))),
    ]
    return page(
        "Environment variables",
        "Every variable `reconcile` and its GitHub Action read, found in the code. Command "
        "hooks never get the run's environment: see "
        "[Hooks](../hooks.md#the-environment-of-a-command-hook).",
        body,
    )
