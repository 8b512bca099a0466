"""Reading what a kustomization names before kustomize renders it: every kustomization a
directory reaches through local bases, with the plugin configurations of their generators,
transformers and validators, each entry of each field (`kustomize_fields`) checked: a remote one
is refused unless `--kustomize-allow-remote` allows it, and with `--git` one that resolves
outside the checkout is refused."""

from __future__ import annotations

from dataclasses import field
from pathlib import Path
from typing import Any

from reconcile.budget import Budget
from reconcile.config import KustomizeSettings
from reconcile.files.kustomize_fields import (
    DESCENDED,
    PLUGIN_FIELDS,
    Entry,
    InlineConfig,
    entries,
)
from reconcile.files.reader import MAX_TEXT_BYTES
from reconcile.objects.lazy_pattern import on_first_use
from reconcile.objects.yamltext import YamlError, load_documents
from reconcile.records import dataclass

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")

# a scheme (two letters at least: `C:/` is a drive) and a path: `https://`, `file:/etc`
_SCHEME = on_first_use(r"^[A-Za-z][A-Za-z0-9+.-]+:/")
_SCP = on_first_use(r"^[^/@:\s]+@[^/:\s]+:")  # git@github.com:org/repo
_HOST = on_first_use(r"^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+(:[0-9]+)?$")


class KustomizeError(ValueError):
    """A directory holding a kustomization cannot be rendered; the message names it (or the
    kustomization file and entry at fault) and says why, on one line."""


def kustomization_file(directory: Path) -> Path | None:
    """The kustomization file of `directory`, or None when it holds none."""
    for name in KUSTOMIZATION_FILES:
        candidate = directory / name
        if candidate.is_file():
            return candidate
    return None


def is_remote(entry: str, directory: Path) -> bool:
    """Whether kustomize fetches `entry` (of the kustomization in `directory`) from the
    network: a URL (`//host/x` too), a git address (`git@host:`, `git::`, `gh:`), or a host and
    a path without a scheme (`github.com/org/repo`, or `example.com/x` when no such local path
    exists)."""
    text = entry.strip()
    if _SCHEME().match(text) or _SCP().match(text):
        return True
    if text.startswith(("git::", "gh:", "git@", "//")):
        return True
    first, slash, _ = text.partition("/")
    if not slash or not _HOST().match(first):
        return False
    if first.lower() == "github.com":
        return True  # kustomize reads it as a repository even when such a directory exists
    return not (directory / text.split("?", 1)[0]).exists()


def references(file: Path) -> list[tuple[str, str]]:
    """(field, entry) for every file, directory or remote target a kustomization file names
    itself (not what its plugin configurations name: see `_entries`). Raises KustomizeError
    when the file cannot be read: what kustomize would read from it is then unknown."""
    return [
        (item.field, item.value)
        for item in _document_entries(_Walk(None, None).documents(file, KUSTOMIZATION))
        if isinstance(item, Entry)
    ]


def check_kustomization(
    directory: Path, settings: KustomizeSettings, budget: Budget | None = None
) -> None:
    """Read the kustomization of `directory` and, through its local bases, every one it
    reaches, with the plugin configurations of their generators, transformers and validators;
    raise KustomizeError naming the file and field of an entry that is remote (unless allowed)
    or resolves outside `settings.confined_to` (BudgetExhausted when `budget` ends)."""
    _Walk(settings, budget).reached(directory)


def kustomization_roots(directories: list[Path]) -> list[Path]:
    """The kustomizations of a directory walk that are not bases of another one found in it:
    a base renders as part of the overlays that reach it, not again on its own. (Two that
    reach each other are both kept: kustomize reports the cycle.)"""
    reached = {d: _Walk(None, None).reached(d) - {d.resolve()} for d in directories}
    return [
        d
        for d in directories
        if not any(
            d.resolve() in reached[other] and other.resolve() not in reached[d]
            for other in directories
            if other != d
        )
    ]


@dataclass
class _Walk:
    """One reading of the kustomizations a directory reaches. With `settings`, every entry is
    checked (KustomizeError) and plugin configurations are read too; without, a kustomization
    that cannot be read reaches nothing (rendering it says why). What it reads in all is
    bounded (MAX_TEXT_BYTES), and so is its time (`budget`)."""

    settings: KustomizeSettings | None
    budget: Budget | None
    read: int = 0
    configs: dict[Path, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def root(self) -> Path | None:
        confined = self.settings.confined_to if self.settings else None
        return Path(confined).resolve() if confined else None

    def reached(self, directory: Path) -> set[Path]:
        """The directories (resolved) of the kustomizations `directory` reaches through local
        entries, itself included."""
        # (directory, whether its kustomization renders plugin configurations: it is reached
        # through generators, transformers or validators)
        seen: set[tuple[Path, bool]] = set()
        pending = [(directory.resolve(), False)]
        while pending:
            current, plugins = pending.pop()
            if (current, plugins) in seen or (current, True) in seen:
                continue
            seen.add((current, plugins))
            if self.budget is not None:
                self.budget.check(f"reading the kustomizations of {directory}")
            file = kustomization_file(current)
            if file is None:
                continue
            try:
                found = self.entries(file, plugins)
            except KustomizeError:
                if self.settings is not None:
                    raise
                continue
            for where, entry in found:
                target = _checked(where, entry, current, self.settings, self.root)
                if (
                    target is not None
                    and entry.listed
                    and entry.top in DESCENDED
                    and target.is_dir()
                ):
                    pending.append((target, plugins or entry.top in PLUGIN_FIELDS))
        return {reached for reached, _ in seen}

    def entries(self, file: Path, plugins: bool) -> list[tuple[str, Entry]]:
        """(the file it is in, as messages name it; entry) for every entry of a kustomization
        file and, when checking, of the plugin configurations it holds or names: inline, in
        its local files (and with `plugins` in the files of its resources, which kustomize then
        reads as plugin configurations). Only a file within the kustomization's directory is
        read, as kustomize reads only those."""
        directory = file.parent.resolve()
        shown = _shown(file, self.root)
        found: list[tuple[str, Entry]] = []
        for item in _document_entries(self.documents(file, KUSTOMIZATION)):
            if isinstance(item, InlineConfig):
                if self.settings is not None:
                    label = f"{file} {item.field} (inline)"
                    documents = _parse(item.text, label, PLUGIN_CONFIG)
                    found += [(shown, e) for e in _config_entries(documents, item.field)]
                continue
            found.append((shown, item))
            in_plugins = item.top in PLUGIN_FIELDS or (plugins and item.top in DESCENDED)
            if self.settings is None or not (in_plugins and item.listed):
                continue
            if is_remote(item.value, directory):
                continue
            try:
                config = (directory / item.value).resolve()
            except (OSError, ValueError):
                continue
            if not config.is_relative_to(directory) or not config.is_file():
                continue
            documents = self.documents(config, PLUGIN_CONFIG)
            for index, document in enumerate(documents):
                number = f"document {index + 1}, " if len(documents) > 1 else ""
                label = f"{_shown(config, self.root)} ({number}{item.field} of {shown})"
                found += [(label, e) for e in _config_entries([document], "")]
        return found

    def documents(self, file: Path, not_one: str) -> list[dict[str, Any]]:
        """The YAML mappings of `file` (a kustomization, or a file of plugin configurations),
        read once per walk."""
        key = file.resolve()
        if key not in self.configs:
            left = MAX_TEXT_BYTES - self.read
            try:
                with file.open("rb") as stream:
                    data = stream.read(left + 1)
            except OSError as exc:
                raise KustomizeError(f"{file}: cannot be read: {exc.strerror or exc}") from None
            self.read += len(data)
            if len(data) > left:
                raise KustomizeError(
                    f"{file}: not read: the kustomizations and plugin configurations it "
                    f"takes to render hold more than {MAX_TEXT_BYTES // 2**20} MiB"
                )
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                raise KustomizeError(f"{file}: cannot be read: not UTF-8 text") from None
            self.configs[key] = _parse(text, str(file), not_one)
        return self.configs[key]


def _checked(
    shown: str, entry: Entry, directory: Path, settings: KustomizeSettings | None, root: Path | None
) -> Path | None:
    """Where a local entry resolves (None: it names nothing kustomize could read locally);
    with `settings`, KustomizeError when it is remote and not allowed, or outside `root`."""
    target = None
    for candidate in entry.candidates():
        if is_remote(candidate, directory):
            if settings is not None and not settings.allow_remote:
                raise KustomizeError(
                    f"{shown}: {entry.field} entry {candidate!r} is remote "
                    "(kustomize would fetch it from the network); --kustomize-allow-remote "
                    "allows it"
                )
            continue
        try:
            resolved = (directory / candidate).resolve()
        except (OSError, ValueError):
            continue  # no such path: kustomize says so
        if settings is not None and root is not None and not resolved.is_relative_to(root):
            raise KustomizeError(
                f"{shown}: {entry.field} entry {candidate!r} resolves outside the "
                "repository; with --git, a kustomization may only name the repository's own "
                "files"
            )
        target = target or resolved
    return target


KUSTOMIZATION = "not a kustomization (a YAML mapping)"
PLUGIN_CONFIG = "not a plugin configuration (a YAML mapping)"


def _parse(text: str, label: str, not_one: str) -> list[dict[str, Any]]:
    try:
        documents = load_documents(text, label)
    except YamlError as exc:
        raise KustomizeError(f"{label}: cannot be read: {exc.reason}") from None
    found = []
    for document in documents:
        if document is None:
            continue
        if not isinstance(document, dict):
            raise KustomizeError(f"{label}: {not_one}")
        found.append(document)
    return found


def _document_entries(documents: list[dict[str, Any]]) -> list[Entry | InlineConfig]:
    return [item for document in documents for item in entries(document)]


def _config_entries(documents: list[dict[str, Any]], within: str) -> list[Entry]:
    """The entries of plugin configurations (inline at `within` of a kustomization, or a
    file's documents)."""
    found: list[Entry] = []
    for index, document in enumerate(documents):
        where = f"{within} (document {index + 1})" if within and len(documents) > 1 else within
        found += [e for e in entries(document, plugin=True, within=where) if isinstance(e, Entry)]
    return found


def _shown(file: Path, root: Path | None) -> str:
    """A kustomization file as messages name it: within the checkout, relative to its root."""
    if root is not None and file.resolve().is_relative_to(root):
        return file.resolve().relative_to(root).as_posix()
    return str(file)
