#!/usr/bin/env python3
"""Holds the product's code to its sizes, so the layout does not drift back: no module over
450 lines, no function (or method, nested ones included) over 80, counted from its `def` line
to its last. One thing is excused: the signature of a typer command, a function decorated
`@<app>.command(...)` or `@<app>.callback(...)`, whose parameters are the command's option
declarations; its body (from its first statement, docstring included) is held to 80 lines.

    scripts/check_sizes.py [PATH ...]    (default: reconcile github-actions)

Prints one line per excess and exits 1 when there is any. Run by scripts/test beside ruff.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 80
DEFAULT_PATHS = ("reconcile", "github-actions")
_TYPER_DECORATORS = ("command", "callback")


def excesses(path: Path) -> Iterator[str]:
    """What in one Python file is over its size, one line each."""
    text = path.read_text(encoding="utf-8")
    lines = len(text.splitlines())
    if lines > MAX_MODULE_LINES:
        yield f"{path}: {lines} lines (a module has at most {MAX_MODULE_LINES})"
    for node in ast.walk(ast.parse(text, filename=str(path))):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        end = node.end_lineno or node.lineno
        if _is_typer_command(node):
            counted, what = end - node.body[0].lineno + 1, "the body of typer command"
        else:
            counted, what = end - node.lineno + 1, "function"
        if counted > MAX_FUNCTION_LINES:
            yield (
                f"{path}:{node.lineno}: {what} {node.name} is {counted} lines "
                f"(at most {MAX_FUNCTION_LINES})"
            )


def _is_typer_command(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(
        isinstance(decorator, ast.Call)
        and isinstance(decorator.func, ast.Attribute)
        and decorator.func.attr in _TYPER_DECORATORS
        for decorator in node.decorator_list
    )


def python_files(paths: list[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*.py") if ".venv" not in p.parts)
        else:
            yield path


def main(argv: list[str]) -> int:
    paths = [Path(arg) for arg in argv] or [Path(p) for p in DEFAULT_PATHS]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        print(f"check_sizes: no such file or directory: {', '.join(missing)}", file=sys.stderr)
        return 2
    found = [line for path in python_files(paths) for line in excesses(path)]
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
