"""The errors of the run's JSON report as GitHub error annotations: at most 10 (GitHub shows no
more for a step), the first 9 and a count of the rest when there are more.

An error that names a manifest file of the workspace gets `file` (relative to the workspace)
and `line`, so GitHub shows it on that file, in a pull request's diff too:

- `apps/x.yaml (document 2)`, `... (document 2, item 3)`: the line where that document starts
  (its `---`, or line 1 for a first document without one; line 1 in a JSON file);
- `apps/x.yaml: invalid YAML: ... (line 5, column 3)`: that line and column.

A `--local` failure lists one manifest a line, each named relative to the `--local` directory:
each becomes an annotation of its own. A file outside the workspace gets no `file`, nor does
anything of a `--git` run (its files were in a checkout that is gone, and may differ from the
workspace's).

Usage: python annotate.py REPORT WORDS, WORDS being the run's arguments as arguments.py wrote
them (where the `--local` directories are). GITHUB_WORKSPACE is the workspace (default: the
working directory)."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MAX_ANNOTATIONS = 10
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
TITLE = "reconcile"

_DOCUMENT = re.compile(r" \(document (\d+)(?:, item \d+)?\)")
_YAML_MARK = re.compile(r"\(line (\d+), column (\d+)\)")
_AGGREGATE = re.compile(r"(--[\w-]+): [^\n]*:")  # "--local: 2 manifests failed to load:"
_DOCUMENT_START = re.compile(r"---(?:\s|$)")
# A path is looked for starting after one of the last few spaces before what follows it: a
# path with more spaces than that is not found (and an error's text is read in linear time).
_PATH_STARTS = 16


@dataclass(frozen=True)
class Place:
    file: str  # relative to the workspace, `/`-separated
    line: int | None = None
    column: int | None = None


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def expand(error: str) -> list[str]:
    """An error listing one failure a line (`--local: 2 manifests failed to load:` then an
    indented line each) as one error per failure, each named by the option."""
    head, *rest = error.split("\n")
    found = _AGGREGATE.fullmatch(head)
    if found and rest and all(line.startswith("  ") and line.strip() for line in rest):
        return [f"{found.group(1)} {line.strip()}" for line in rest]
    return [error]


def document_line(text: str, number: int) -> int | None:
    """The line (from 1) where document `number` (from 1, as reconcile counts them) of a YAML
    text starts. A `---` at the start of a line (alone, or followed by a space) always starts
    a document, in a block scalar too; the first document may have none."""
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines, start=1) if _DOCUMENT_START.match(line)]
    first = starts[0] if starts else len(lines) + 1
    # What precedes the first `---` is a document of its own unless it is only blank lines,
    # comments and directives (`%YAML 1.2`).
    if any(_is_content(line) for line in lines[: first - 1]):
        starts.insert(0, 1)
    if not starts:
        return 1 if number == 1 else None
    return starts[number - 1] if number <= len(starts) else None


def _is_content(line: str) -> bool:
    stripped = line.strip().lstrip("\ufeff")
    return bool(stripped) and not stripped.startswith(("#", "%", "..."))


@dataclass(frozen=True)
class Locator:
    """Finds the file an error names: paths are read relative to the working directory (or,
    for `--local` failures, to the `--local` directories first)."""

    cwd: Path
    workspace: Path
    local: Sequence[Path] = ()  # the --local directories
    others: Sequence[Path] = ()  # the other directories among the arguments

    def locate(self, error: str) -> Place | None:
        bases = [*self.local, self.cwd] if error.startswith("--local") else [self.cwd, *self.others]
        for found in _DOCUMENT.finditer(error):
            file = _file_before(error, found.start(), bases)
            if file is not None:
                return self._place(file, document=int(found.group(1)))
        for colon in re.finditer(":", error):
            file = _file_before(error, colon.start(), bases)
            if file is not None:
                mark = _YAML_MARK.search(error, colon.end())
                if mark is None:
                    return self._place(file)
                return self._place(file, line=int(mark.group(1)), column=int(mark.group(2)))
        return None

    def _place(
        self,
        file: Path,
        *,
        document: int | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> Place | None:
        real = file.resolve()
        workspace = self.workspace.resolve()
        if not real.is_relative_to(workspace):
            return None
        if document is not None:
            if real.suffix == ".json":
                line = 1
            else:
                try:
                    text = real.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    text = None
                line = None if text is None else document_line(text, document)
        return Place(real.relative_to(workspace).as_posix(), line, column)


def _file_before(text: str, end: int, bases: Sequence[Path]) -> Path | None:
    """The manifest file named by the text that ends at `end` (the longest such text that
    starts at the beginning or after a space or a parenthesis)."""
    prefix = text[:end]
    if not prefix.endswith(MANIFEST_SUFFIXES):
        return None
    starts = [0] + [i + 1 for i, char in enumerate(prefix) if char in " \t("]
    for start in starts[-_PATH_STARTS:] if len(starts) > _PATH_STARTS else starts:
        candidate = prefix[start:]
        if not candidate or candidate != candidate.strip() or "\n" in candidate:
            continue
        path = Path(candidate)
        for base in [Path()] if path.is_absolute() else bases:
            full = base / path
            try:
                if full.is_file():
                    return full
            except OSError:  # a name too long, say: not a file
                continue
    return None


def annotation(error: str, place: Place | None) -> str:
    properties: list[tuple[str, str]] = []
    if place is not None:
        properties.append(("file", place.file))
        if place.line is not None:
            properties.append(("line", str(place.line)))
            if place.column is not None:
                properties.append(("col", str(place.column)))
    properties.append(("title", TITLE))
    listed = ",".join(f"{name}={escape_property(value)}" for name, value in properties)
    return f"::error {listed}::{escape_data(error)}"


def commands(errors: Sequence[str], locator: Locator | None) -> list[str]:
    """The annotation commands for `errors` (no places without a locator)."""
    expanded = [part for error in errors for part in expand(error)]
    shown = expanded if len(expanded) <= MAX_ANNOTATIONS else expanded[: MAX_ANNOTATIONS - 1]
    out = [annotation(error, locator.locate(error) if locator else None) for error in shown]
    if len(expanded) > len(shown):
        more = len(expanded) - len(shown)
        out.append(annotation(f"{more} more errors: see the job summary and the JSON report", None))
    return out


def option_values(words: Sequence[str], option: str) -> list[str]:
    values = []
    for index, word in enumerate(words):
        if word == option and index + 1 < len(words):
            values.append(words[index + 1])
        elif word.startswith(f"{option}="):
            values.append(word.split("=", 1)[1])
    return values


def locator_for(words: Sequence[str], cwd: Path, workspace: Path) -> Locator:
    local = option_values(words, "--local") + os.environ.get("RECONCILE_LOCAL", "").split()
    candidates = [
        word.split("=", 1)[1] if word.startswith("--") and "=" in word else word for word in words
    ]
    return Locator(
        cwd=cwd,
        workspace=workspace,
        local=[cwd / value for value in local if value and (cwd / value).is_dir()],
        others=[cwd / value for value in candidates if value and (cwd / value).is_dir()],
    )


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: annotate.py REPORT WORDS", file=sys.stderr)
        return 2
    try:
        with open(argv[0], encoding="utf-8") as stream:
            report = json.load(stream)
    except (OSError, ValueError):
        return 0  # no report: reconcile's own output says why
    errors = report.get("errors") if isinstance(report, dict) else None
    if not isinstance(errors, list) or not errors:
        return 0
    try:
        with open(argv[1], encoding="utf-8") as stream:
            words = [word for word in stream.read().split("\0") if word]
    except OSError:
        words = []
    cwd = Path.cwd()
    workspace = Path(os.environ.get("GITHUB_WORKSPACE") or cwd)
    # A --git run read its files from a checkout that is gone (and may differ from the
    # workspace's): no error of it is placed in the workspace.
    locator = locator_for(words, cwd, workspace) if report.get("source") is None else None
    for line in commands([str(error) for error in errors], locator):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
