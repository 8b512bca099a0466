"""Each example directory stands alone: its Python imports only the standard library and the
files beside it, and its copy of hooklib.py is examples/hooklib.py, byte for byte, so that the
copies never drift (examples/README.md says how to update them)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
CANONICAL = EXAMPLES / "hooklib.py"
EXAMPLE_DIRS = sorted(
    p for p in EXAMPLES.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))
)
UPDATE = "edit examples/hooklib.py, then copy it over every example's (examples/README.md)"


def imported_modules(source: Path) -> set[str]:
    """The top-level names of the modules `source` imports (relative imports as '.')."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(), str(source))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add("." if node.level else (node.module or "").split(".")[0])
    return found


def test_there_are_examples_and_copies() -> None:
    assert len(EXAMPLE_DIRS) > 1
    assert len(list(EXAMPLES.glob("*/hooklib.py"))) > 1


@pytest.mark.parametrize("example", EXAMPLE_DIRS, ids=[p.name for p in EXAMPLE_DIRS])
def test_example_imports_nothing_from_outside_its_directory(example: Path) -> None:
    for source in sorted(example.rglob("*.py")):
        beside = {p.stem for p in source.parent.glob("*.py")} - {source.stem}
        outside = imported_modules(source) - set(sys.stdlib_module_names) - beside
        where = source.relative_to(ROOT)
        assert not outside, f"{where} imports {sorted(outside)}: neither stdlib nor beside it"
        # a script's own directory is on its import path: anything more reaches outside it
        assert "sys.path" not in source.read_text(), f"{where} changes sys.path"
        if "hooklib" in imported_modules(source):
            assert (source.parent / "hooklib.py").is_file(), f"{where}: no hooklib.py beside it"


def test_every_copy_of_hooklib_is_the_canonical_one() -> None:
    canonical = CANONICAL.read_bytes()
    copies = sorted(p for p in EXAMPLES.rglob("hooklib.py") if p != CANONICAL)
    differ = [str(p.relative_to(ROOT)) for p in copies if p.read_bytes() != canonical]
    assert not differ, f"{differ} differ from examples/hooklib.py: {UPDATE}"


def test_hooklib_is_standard_library_only() -> None:
    outside = imported_modules(CANONICAL) - set(sys.stdlib_module_names)
    assert not outside, f"examples/hooklib.py imports {sorted(outside)}"
