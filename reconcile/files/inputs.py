"""The manifests of a path, as `kubectl apply -f` (and `-k`) reads them: files, directories
holding a kustomization (rendered by kustomize), and `-` for standard input.

A directory holding a kustomization is one unit, rendered whole. A walk of a directory without
one reads its manifest files (sorted; hidden entries skipped); with `recursive` (`-R`) it goes
into subdirectories too, but not into one holding a kustomization: that renders as a unit,
unless another kustomization found in the same walk reaches it as a base (it then renders as
part of that overlay, never twice).

Several readers take the same path in one run (`--local` seeds the cluster and brings
controllers, `--output-dir` needs where they came from, `--manifests` is read again after it is
applied). Inside `reading_inputs`, a kustomization is rendered once and standard input is read
once, so that every reader sees the same text; outside it, nothing is kept."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import field
from enum import StrEnum
from pathlib import Path
from typing import Any

from reconcile.budget import Budget
from reconcile.config import KustomizeSettings
from reconcile.files.kustomize import (
    KustomizeError,
    kustomization_file,
    kustomization_roots,
    render,
)
from reconcile.files.reader import (
    MANIFEST_SUFFIXES,
    MAX_TEXT_BYTES,
    Document,
    Problem,
    documents_of,
    load_file,
    parse_documents,
    read_documents,
)
from reconcile.objects.jsondata import json_copy
from reconcile.records import dataclass

ParsedFile = tuple[list[Document], list[Problem]]

STANDARD_INPUT = "-"
STANDARD_INPUT_LABEL = "(standard input)"


def is_standard_input(path: Path | str) -> bool:
    return str(path) == STANDARD_INPUT


class SourceKind(StrEnum):
    FILE = "file"
    KUSTOMIZATION = "kustomization"  # a directory, rendered by kustomize
    STANDARD_INPUT = "standard input"


@dataclass(frozen=True)
class ManifestSource:
    """One unit of manifests: a file, a directory rendered by kustomize, or standard input."""

    path: Path  # `-` for standard input
    kind: SourceKind

    @property
    def label(self) -> str:
        """What messages call it: the path as given or walked."""
        return STANDARD_INPUT_LABEL if self.kind is SourceKind.STANDARD_INPUT else str(self.path)

    def label_within(self, walked: Path) -> str:
        """The label relative to the directory walked to find it (the path itself when it is
        what was given)."""
        if self.kind is SourceKind.STANDARD_INPUT or self.path == walked or not walked.is_dir():
            return self.label
        return self.path.relative_to(walked).as_posix()

    @property
    def home(self) -> Path:
        """Where the command hooks of controllers read from it run by default: beside the
        file, in the kustomization's directory, or (standard input) the current directory."""
        if self.kind is SourceKind.FILE:
            return self.path.parent.resolve()
        if self.kind is SourceKind.KUSTOMIZATION:
            return self.path.resolve()
        return Path.cwd().resolve()

    def documents(self, label: str | None = None) -> tuple[list[Document], list[Problem]]:
        """Its objects (named from `label`, default `self.label`) and the problems of its
        documents, as `read_documents` reads a file. Raises OSError, or ValueError (YamlError,
        KustomizeError) when it cannot be read as a whole; BudgetExhausted when the run's
        budget ends while kustomize renders it."""
        label = label or self.label
        reading = _reading()
        if self.kind is SourceKind.FILE:
            return reading.file_documents(self.path, label)
        if self.kind is SourceKind.KUSTOMIZATION:
            return parse_documents(reading.rendered(self.path), label, rendered_by="kustomize")
        return parse_documents(reading.standard_input(), label)


def manifest_sources(path: Path, recursive: bool = False) -> list[ManifestSource]:
    """The units of manifests at `path` (see the module's description), sorted by their path
    within it. Raises FileNotFoundError when there is nothing at `path`."""
    if is_standard_input(path):
        return [ManifestSource(path, SourceKind.STANDARD_INPUT)]
    if path.is_file():
        return [ManifestSource(path, SourceKind.FILE)]
    if not path.is_dir():
        raise FileNotFoundError(f"no such file or directory: {path}")
    if kustomization_file(path) is not None:
        return [ManifestSource(path, SourceKind.KUSTOMIZATION)]
    files: list[Path] = []
    kustomizations: list[Path] = []
    _walk(path, recursive, files, kustomizations)
    found = [ManifestSource(f, SourceKind.FILE) for f in files] + [
        ManifestSource(d, SourceKind.KUSTOMIZATION) for d in kustomization_roots(kustomizations)
    ]
    return sorted(found, key=lambda s: s.path.relative_to(path).as_posix())


def _walk(directory: Path, recursive: bool, files: list[Path], kustomizations: list[Path]) -> None:
    for child in directory.iterdir():
        if child.name.startswith("."):
            continue
        if child.is_dir():
            # a linked directory is not followed, as `kubectl -R` does not follow one
            if not recursive or child.is_symlink():
                continue
            if kustomization_file(child) is not None:
                kustomizations.append(child)
            else:
                _walk(child, recursive, files, kustomizations)
        elif child.suffix in MANIFEST_SUFFIXES and child.is_file():
            files.append(child)


# --- reading once per run ------------------------------------------------------------------------


@dataclass
class _Reading:
    settings: KustomizeSettings
    budget: Budget | None
    renders: dict[Path, str | KustomizeError] = field(default_factory=dict)
    stdin: str | ValueError | None = None
    # files as loaded, when reading within a run: `--local` manifests are read to seed the
    # cluster and again for the controllers they hold, and parsing YAML is most of a start-up
    loaded: dict[Path, list[Any]] | None = None

    def file_documents(self, path: Path, label: str) -> ParsedFile:
        if self.loaded is None:
            return read_documents(path, label)
        key = path.resolve()
        if key not in self.loaded:
            self.loaded[key] = load_file(path, label)  # a file that fails is read again
        # each reader gets objects of its own (some change what they read), named its way
        return documents_of(json_copy(self.loaded[key]), label)

    def rendered(self, directory: Path) -> str:
        key = directory.resolve()
        if key not in self.renders:
            try:
                self.renders[key] = render(directory, self.settings, self.budget)
            except KustomizeError as exc:
                self.renders[key] = exc
        found = self.renders[key]
        if isinstance(found, KustomizeError):
            raise KustomizeError(str(found))
        return found

    def standard_input(self) -> str:
        if self.stdin is None:
            try:
                self.stdin = _read_standard_input()
            except ValueError as exc:
                self.stdin = exc
        if isinstance(self.stdin, ValueError):
            raise ValueError(str(self.stdin))
        return self.stdin


_active: ContextVar[_Reading | None] = ContextVar("reconcile_inputs", default=None)


@contextlib.contextmanager
def reading_inputs(settings: KustomizeSettings, budget: Budget | None = None) -> Iterator[None]:
    """A run's reading of its inputs: kustomizations rendered with `settings`, within
    `budget`; each rendered, and standard input read, once. Inside a reading with the same
    settings and budget, that one goes on (a run's parts open it each)."""
    current = _active.get()
    if current is not None and current.settings == settings and current.budget is budget:
        yield
        return
    token = _active.set(_Reading(settings, budget, loaded={}))
    try:
        yield
    finally:
        _active.reset(token)


def _reading() -> _Reading:
    return _active.get() or _Reading(KustomizeSettings(), None)


def _read_standard_input() -> str:
    stream = sys.stdin
    if stream is None:
        raise ValueError(f"{STANDARD_INPUT_LABEL}: there is none")
    data = stream.buffer.read(MAX_TEXT_BYTES + 1)
    if len(data) > MAX_TEXT_BYTES:
        raise ValueError(f"{STANDARD_INPUT_LABEL}: more than {MAX_TEXT_BYTES // 2**20} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{STANDARD_INPUT_LABEL}: not UTF-8 text") from None
