"""The field table of docs/controllers.md ("Every field") is what the controller parsers do:
every field of Metacontroller's CRDs (vendored) and of reconcile's own CRDs (the three kinds,
MapController's and the command hook included) falls under a row of the table for its kind,
and the row says what reading it does: accepted ("Supported", "Accepted", ...), ignored with a
warning, or refused. No row names a field that no CRD has."""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile.specs.errors import SpecError
from reconcile.specs.map_controller import parse_map_controller
from tests.unit.test_metacontroller_fields import (
    BASES,
    BLOCKS,
    FIELDS,
    PARSERS,
    SAMPLES,
    _schema_paths,
    complete_block,
    with_field,
)

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "controllers.md"
OURS = ROOT / "reconcile" / "crds"
KINDS = {
    "Composite": "CompositeController",
    "Decorator": "DecoratorController",
    "Map": "MapController",
}
MAP_BASE: dict[str, Any] = {
    "parentResource": {"apiVersion": "example.com/v1", "resource": "schedules"},
    "inputResources": [{"apiVersion": "v1", "resource": "persistentvolumeclaims"}],
    "outputResources": [{"apiVersion": "v1", "resource": "configmaps"}],
    "hooks": {
        name: {"webhook": {"url": f"http://hook.example/{name}"}} for name in ("map", "tombstone")
    },
}
ALL_BASES = {**BASES, "MapController": MAP_BASE}
ALL_PARSERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    **PARSERS,
    "MapController": parse_map_controller,
}
# Values for the command hook's fields, whose type alone does not make a usable one.
COMMAND_SAMPLES: dict[str, Any] = {"argv": ["python3", "hooks.py"], "workingDir": "."}


def our_fields() -> list[tuple[str, tuple[str, ...], dict[str, Any]]]:
    found = []
    for path in sorted(OURS.glob("*controllers.yaml")):
        crd = yaml.safe_load(path.read_text())
        kind = crd["spec"]["names"]["kind"]
        spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        found += [(kind, p, s) for p, s in _schema_paths(spec, ())]
    return found


def every_field() -> list[tuple[str, tuple[str, ...], dict[str, Any]]]:
    seen: set[tuple[str, tuple[str, ...]]] = set()
    out = []
    for kind, path, schema in [*FIELDS, *our_fields()]:
        if (kind, path) not in seen:
            seen.add((kind, path))
            out.append((kind, path, schema))
    return out


def value_for(name: str, schema: dict[str, Any]) -> Any:
    if name in COMMAND_SAMPLES:
        return COMMAND_SAMPLES[name]
    if "enum" in schema:
        return schema["enum"][-1]
    if name in SAMPLES:
        return SAMPLES[name]
    return {"string": "x", "integer": 1, "number": 1, "boolean": True, "object": {}}.get(
        schema.get("type", "object"), []
    )


def read_as(kind: str, path: tuple[str, ...], schema: dict[str, Any]) -> str:
    """What the parser does with the field: accepted, ignored (a warning names it) or refused."""
    base = copy.deepcopy(ALL_BASES[kind])
    if "command" in path:  # a hook is a webhook or a command, never both
        hook = path[path.index("hooks") + 1]
        base["hooks"][hook] = {"command": {"argv": ["python3", "hooks.py"]}}
    block = next((n for n in range(len(path)) if path[n] in BLOCKS), None)
    if block is None:
        spec = with_field(base, path, value_for(path[-1], schema))
    else:
        spec = with_field(base, path[: block + 1], complete_block(path, block))
    obj = {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": "fields"},
        "spec": spec,
    }
    try:
        parsed = ALL_PARSERS[kind](obj)
    except SpecError as exc:
        assert "not supported" in str(exc), str(exc)  # refused for what it is, not as bad input
        return "refused"
    return (
        "ignored"
        if any(": ignored: " in w for w in getattr(parsed, "warnings", ()))
        else "accepted"
    )


@functools.cache
def table() -> list[tuple[list[list[str]], set[str], str]]:
    """The rows of the table: (field paths as segments, kinds, what the row says)."""
    text = PAGE.read_text()
    section = text[text.index("## Every field") :]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("Field", "---") or not cells[0].startswith("`"):
            continue
        paths = [p.replace("[]", "").split(".") for p in re.findall(r"`([^`]+)`", cells[0])]
        kinds = {KINDS[k.strip()] for k in cells[1].split(",")}
        says = cells[2].split()[0].strip(".:")
        said = {"Ignored": "ignored", "Refused": "refused"}.get(says, "accepted")
        rows.append((paths, kinds, said))
    return rows


def segments(path: tuple[str, ...]) -> list[str]:
    return [step for step in path if step != "[]"]


HOOKS = {"sync", "finalize", "customize", "map", "tombstone"}  # what `<hook>` stands for


def covers(row_path: list[str], field: list[str]) -> bool:
    return len(row_path) <= len(field) and all(
        r == f or (r == "<hook>" and f in HOOKS) for r, f in zip(row_path, field, strict=False)
    )


def row_for(kind: str, field: list[str]) -> tuple[list[str], str] | None:
    """The most specific row naming the field for its kind."""
    found = [
        (path, said)
        for paths, kinds, said in table()
        for path in paths
        if kind in kinds and covers(path, field)
    ]
    return max(found, key=lambda r: len(r[0])) if found else None


FIELD_LIST = every_field()


@pytest.mark.parametrize(
    ("kind", "path", "schema"),
    FIELD_LIST,
    ids=[f"{k}.{'.'.join(segments(p))}" for k, p, _ in FIELD_LIST],
)
def test_the_table_says_what_reading_each_field_does(
    kind: str, path: tuple[str, ...], schema: dict[str, Any]
) -> None:
    row = row_for(kind, segments(path))
    assert row is not None, f"{kind} {'.'.join(segments(path))}: no row of the table names it"
    assert read_as(kind, path, schema) == row[1], (kind, path, row)


def test_every_row_names_fields_a_crd_has() -> None:
    fields = [(k, segments(p)) for k, p, _ in FIELD_LIST]
    for paths, kinds, _ in table():
        for path in paths:
            for kind in kinds:
                assert any(k == kind and covers(path, f) for k, f in fields), (kind, path)


def test_the_table_is_read() -> None:
    rows = table()
    assert len(rows) > 15
    assert {said for _, _, said in rows} == {"accepted", "ignored"}
