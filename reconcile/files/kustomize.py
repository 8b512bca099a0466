"""Directories holding a kustomization, rendered as kubectl renders them for `apply -k`.

`kustomize build DIR` when `kustomize` is on PATH, else `kubectl kustomize DIR` (the kustomize
built into kubectl). Before either runs, the kustomization files it would read are read here,
following local bases, with the plugin configurations of their generators, transformers and
validators: an entry kustomize could fetch from the network (a URL, a git repository), in any
field (`kustomize_fields`), is refused unless `--kustomize-allow-remote` allows it, since the
run would then apply whatever that server says; with `--git`, an entry that resolves outside
the checkout is refused (a repository names only its own files). Without
`--kustomize-allow-remote`, kustomize itself runs off the network (`offline`), so that a field
this check does not know of fetches nothing either. kustomize runs in a process group of its
own, with the base environment of a command hook (PATH, HOME, TMPDIR, the locale; never the
run's credentials), and is killed at its timeout, the budget's end or a signal.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from reconcile.budget import Budget, BudgetExhausted
from reconcile.config import KustomizeSettings
from reconcile.files.kustomize_fields import (
    DESCENDED,
    PLUGIN_FIELDS,
    Entry,
    InlineConfig,
    entries,
)
from reconcile.files.offline import IsolationUnavailable, offline_command, offline_environment
from reconcile.files.reader import MAX_TEXT_BYTES
from reconcile.objects.terminal import printable
from reconcile.objects.yamltext import YamlError, load_documents
from reconcile.secret_values import scrub
from reconcile.specs.hook_env import in_base

log = logging.getLogger(__name__)

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
RENDER_TIMEOUT = 120.0  # seconds, and never beyond the run's budget
MESSAGE_LIMIT = 500  # characters of kustomize's own error kept in ours
_STDERR_TAIL = 64 * 1024

# a scheme (two letters at least: `C:/` is a drive) and a path: `https://`, `file:/etc`
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:/")
_SCP = re.compile(r"^[^/@:\s]+@[^/:\s]+:")  # git@github.com:org/repo
_HOST = re.compile(r"^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+(:[0-9]+)?$")
# kubectl's log header and wrapping around the error: `E1126 11:37:08.019724   15532 run.go:72]
# "command failed" err=<` ... `>`
_KLOG = re.compile(r"^[IWEF][0-9]{4} [0-9:.]+\s+[0-9]+ [^\]]*\]\s*")
_ERROR_START = re.compile(r'^(Error: |error: |"command failed")')


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
    if _SCHEME.match(text) or _SCP.match(text) or text.startswith(("git::", "gh:", "git@", "//")):
        return True
    first, slash, _ = text.partition("/")
    if not slash or not _HOST.match(first):
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
        for item in _document_entries(_documents(file, KUSTOMIZATION))
        if isinstance(item, Entry)
    ]


def check_kustomization(directory: Path, settings: KustomizeSettings) -> None:
    """Read the kustomization of `directory` and, through its local bases, every one it
    reaches, with the plugin configurations of their generators, transformers and validators;
    raise KustomizeError naming the file and field of an entry that is remote (unless allowed)
    or resolves outside `settings.confined_to`."""
    _reached(directory, settings)


def kustomization_roots(directories: list[Path]) -> list[Path]:
    """The kustomizations of a directory walk that are not bases of another one found in it:
    a base renders as part of the overlays that reach it, not again on its own. (Two that
    reach each other are both kept: kustomize reports the cycle.)"""
    reached = {d: _reached(d, None) - {d.resolve()} for d in directories}
    return [
        d
        for d in directories
        if not any(
            d.resolve() in reached[other] and other.resolve() not in reached[d]
            for other in directories
            if other != d
        )
    ]


def _reached(directory: Path, settings: KustomizeSettings | None) -> set[Path]:
    """The directories (resolved) of the kustomizations `directory`'s reaches through local
    entries, itself included. With `settings`, every entry is checked (KustomizeError); without,
    a kustomization that cannot be read reaches nothing (rendering it says why)."""
    root = Path(settings.confined_to).resolve() if settings and settings.confined_to else None
    # (directory, whether its kustomization renders plugin configurations: it is reached
    # through generators, transformers or validators)
    seen: set[tuple[Path, bool]] = set()
    pending = [(directory.resolve(), False)]
    while pending:
        current, plugins = pending.pop()
        if (current, plugins) in seen or (current, True) in seen:
            continue
        seen.add((current, plugins))
        file = kustomization_file(current)
        if file is None:
            continue
        try:
            found = _entries(file, plugins, root)
        except KustomizeError:
            if settings is not None:
                raise
            continue
        for where, entry in found:
            target = _checked(where, entry, current, settings, root)
            if target is not None and entry.listed and entry.top in DESCENDED and target.is_dir():
                pending.append((target, plugins or entry.top in PLUGIN_FIELDS))
    return {reached for reached, _ in seen}


def _entries(file: Path, plugins: bool, root: Path | None) -> list[tuple[str, Entry]]:
    """(the file it is in, as messages name it; entry) for every entry of a kustomization file
    and of the plugin configurations it holds or names (inline, in local files, and with
    `plugins` in the files of its resources, which kustomize then reads as plugin
    configurations). A file outside `root` is not read (the entry naming it is refused)."""
    directory = file.parent
    shown = _shown(file, root)
    found: list[tuple[str, Entry]] = []
    for item in _document_entries(_documents(file, KUSTOMIZATION)):
        if isinstance(item, InlineConfig):
            documents = _parse(item.text, f"{file} {item.field} (inline)", PLUGIN_CONFIG)
            found += [(shown, e) for e in _config_entries(documents, item.field)]
            continue
        found.append((shown, item))
        in_plugins = item.top in PLUGIN_FIELDS or (plugins and item.top in DESCENDED)
        if not (in_plugins and item.listed) or is_remote(item.value, directory):
            continue
        try:
            config = (directory / item.value).resolve()
        except (OSError, ValueError):
            continue
        if (root is None or config.is_relative_to(root)) and config.is_file():
            documents = _documents(config, PLUGIN_CONFIG)
            for index, document in enumerate(documents):
                number = f"document {index + 1}, " if len(documents) > 1 else ""
                label = f"{_shown(config, root)} ({number}{item.field} of {shown})"
                found += [(label, e) for e in _config_entries([document], "")]
    return found


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


def _documents(file: Path, not_one: str) -> list[dict[str, Any]]:
    """The YAML mappings of `file` (a kustomization, or a file of plugin configurations)."""
    try:
        with file.open("rb") as stream:
            data = stream.read(MAX_TEXT_BYTES + 1)
        if len(data) > MAX_TEXT_BYTES:
            raise KustomizeError(f"{file}: cannot be read: more than {MAX_TEXT_BYTES} bytes")
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise KustomizeError(f"{file}: cannot be read: not UTF-8 text") from None
    except OSError as exc:
        raise KustomizeError(f"{file}: cannot be read: {exc.strerror or exc}") from None
    return _parse(text, str(file), not_one)


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


# --- rendering ---------------------------------------------------------------------------------


def render(directory: Path, settings: KustomizeSettings, budget: Budget | None = None) -> str:
    """The YAML kustomize renders for `directory` (named as given in messages). Raises
    KustomizeError, or BudgetExhausted when the run's budget ends or a signal stops it."""
    check_kustomization(directory, settings)
    env = {name: value for name, value in os.environ.items() if in_base(name)}
    search_path = env.get("PATH", os.defpath)
    argv = _command(directory, search_path)
    what = " ".join([Path(argv[0]).name, argv[1]])
    if budget is not None:
        budget.check(f"{what} {directory}")
    if not settings.allow_remote:
        env = offline_environment(env)
        try:
            argv, how = offline_command(argv, settings.isolation, search_path)
        except IsolationUnavailable as exc:
            raise KustomizeError(
                f"{what} {directory}: not run, since it cannot be cut off from the network "
                f"here: {exc}; --kustomize-isolation none runs it without (see the README)"
            ) from None
        log.debug("%s %s: off the network (%s)", what, directory, how)
    limit = budget.bound(RENDER_TIMEOUT) if budget is not None else RENDER_TIMEOUT
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                cwd=directory,
                env=env,
                start_new_session=True,  # its own process group: killed with what it starts
            )
        except OSError as exc:
            raise KustomizeError(f"{what} {directory}: cannot be run: {exc.strerror}") from None
        try:
            _wait(process, limit, budget, f"{what} {directory}")
        finally:
            if process.returncode is None:  # stopped from outside (a signal, the budget)
                _kill(process)
        if process.returncode != 0:
            reason = failure_reason(_tail(err), process.returncode)
            raise KustomizeError(f"{what} {directory} failed: {reason}")
        size = out.seek(0, os.SEEK_END)
        if size > MAX_TEXT_BYTES:
            raise KustomizeError(
                f"{what} {directory}: renders more than {MAX_TEXT_BYTES // 2**20} MiB"
            )
        out.seek(0)
        try:
            return out.read().decode("utf-8")
        except UnicodeDecodeError:
            raise KustomizeError(f"{what} {directory}: rendered text that is not UTF-8") from None


def _command(directory: Path, search_path: str) -> list[str]:
    """kustomize's command line for `directory`: its absolute path cannot be read as an
    option."""
    target = str(directory.resolve())
    kustomize = shutil.which("kustomize", path=search_path)
    if kustomize:
        return [kustomize, "build", target]
    kubectl = shutil.which("kubectl", path=search_path)
    if kubectl:
        return [kubectl, "kustomize", target]
    raise KustomizeError(
        f"{directory} holds a kustomization, but neither kustomize nor kubectl is on PATH to "
        "render it"
    )


def _wait(process: subprocess.Popen[bytes], limit: float, budget: Budget | None, what: str) -> None:
    deadline = time.monotonic() + limit
    while True:
        try:
            process.wait(timeout=min(0.1, max(0.0, deadline - time.monotonic())))
            return
        except subprocess.TimeoutExpired:
            pass
        stopped = budget is not None and (budget.interrupted_by or budget.expired)
        if stopped or time.monotonic() >= deadline:
            _kill(process)
            if budget is not None and stopped:
                raise BudgetExhausted(what, budget.why())
            raise KustomizeError(f"{what}: no answer within {limit:g}s")


def _kill(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _tail(stream: IO[bytes]) -> str:
    size = stream.seek(0, os.SEEK_END)
    stream.seek(max(0, size - _STDERR_TAIL))
    return stream.read().decode("utf-8", errors="replace")


def failure_reason(stderr: str, status: int) -> str:
    """kustomize's (or kubectl's) error on one line, from where the error starts (warnings
    before it left out), scrubbed of credentials and control characters, cut to
    MESSAGE_LIMIT."""
    lines = [_KLOG.sub("", line).strip() for line in stderr.splitlines()]
    lines = [line for line in lines if line and line != ">"]
    starts = [index for index, line in enumerate(lines) if _ERROR_START.match(line)]
    if starts:
        lines = lines[starts[-1] :]
    text = " ".join(" ".join(lines).split())
    text = text.removeprefix('"command failed" err=<').strip()
    text = text.removeprefix("Error: ").removeprefix("error: ")
    text = printable(scrub(text))
    if len(text) > MESSAGE_LIMIT:
        text = text[: MESSAGE_LIMIT - 1] + "…"
    return text or f"exited with status {status}"
