"""scripts/check_sizes.py, the size check of the test command: it refuses a module over 450
lines and a function over 80, excuses a typer command's signature but not its body, and passes
on what is within both."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check_sizes.py"


def check(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, paths)],
        capture_output=True,
        text=True,
        check=False,
    )


def function(name: str, body_lines: int, *, decorator: str = "", params: int = 0) -> str:
    """A function of `body_lines` statements after a signature of `params` parameters."""
    signature = "".join(f"    p{i}: int = {i},\n" for i in range(params))
    body = "".join(f"    x{i} = {i}\n" for i in range(body_lines))
    return f"{decorator}def {name}(\n{signature}) -> None:\n{body}"


def test_a_module_over_450_lines_fails_naming_it(tmp_path: Path) -> None:
    big = tmp_path / "big.py"
    big.write_text("".join(f"X{i} = {i}\n" for i in range(451)))
    done = check(big)
    assert done.returncode == 1
    assert done.stdout == f"{big}: 451 lines (a module has at most 450)\n"
    big.write_text("".join(f"X{i} = {i}\n" for i in range(450)))
    assert check(big).returncode == 0


def test_a_function_over_80_lines_fails_naming_it_and_its_line(tmp_path: Path) -> None:
    module = tmp_path / "functions.py"
    # 2 lines of signature, 79 of body: 81 in all
    module.write_text("import os\n\n\n" + function("too_long", 79) + "\n\n" + function("fine", 78))
    done = check(module)
    assert done.returncode == 1
    assert done.stdout == f"{module}:4: function too_long is 81 lines (at most 80)\n"


def test_a_method_and_a_nested_function_count_too(tmp_path: Path) -> None:
    module = tmp_path / "methods.py"
    method = "\n".join("    " + line for line in function("method", 80).splitlines())
    module.write_text(f"class Thing:\n{method}\n")
    assert "function method is 82 lines" in check(module).stdout


def test_a_typer_command_has_its_signature_excused_and_its_body_counted(tmp_path: Path) -> None:
    module = tmp_path / "cli.py"
    decorator = "@app.command(help='x')\n"
    module.write_text(function("run", 80, decorator=decorator, params=200))
    assert check(module).returncode == 0  # 283 lines, of which 80 are the body
    module.write_text(function("run", 81, decorator=decorator, params=2))
    done = check(module)
    assert done.returncode == 1
    assert done.stdout == f"{module}:2: the body of typer command run is 81 lines (at most 80)\n"
    # only a typer command: any other decorator leaves the signature counted
    module.write_text(function("run", 40, decorator="@functools.cache\n", params=60))
    assert "function run is 102 lines" in check(module).stdout


def test_directories_are_walked_and_a_missing_path_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "sub" / "deep.py").write_text(function("deep", 90))
    (tmp_path / "pkg" / "notes.txt").write_text("x\n" * 1000)  # not Python: not checked
    done = check(tmp_path / "pkg")
    assert done.returncode == 1
    assert "deep.py:1: function deep is 92 lines" in done.stdout
    missing = check(tmp_path / "nowhere")
    assert missing.returncode == 2
    assert "no such file or directory" in missing.stderr
