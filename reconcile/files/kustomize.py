"""Directories holding a kustomization, rendered as kubectl renders them for `apply -k`.

`kustomize build DIR` when `kustomize` is on PATH, else `kubectl kustomize DIR` (the kustomize
built into kubectl). Before either runs, the kustomization files it would read are read here,
following local bases: an entry kustomize would fetch from the network (a URL, a git
repository) is refused unless `--kustomize-allow-remote` allows it, since the run would then
apply whatever that server says; with `--git`, an entry that resolves outside the checkout is
refused (a repository names only its own files). kustomize runs in a process group of its own,
with the base environment of a command hook (PATH, HOME, TMPDIR, the locale; never the run's
credentials), and is killed at its timeout, the budget's end or a signal.
"""

from __future__ import annotations

import contextlib
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
from reconcile.files.reader import MAX_TEXT_BYTES
from reconcile.objects.terminal import printable
from reconcile.objects.yamltext import YamlError, load_documents
from reconcile.secret_values import scrub
from reconcile.specs.hook_env import in_base

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
# The fields whose entries kustomize loads as files, directories or remote targets.
REFERENCE_FIELDS = ("resources", "bases", "components", "generators", "transformers", "validators")
RENDER_TIMEOUT = 120.0  # seconds, and never beyond the run's budget
MESSAGE_LIMIT = 500  # characters of kustomize's own error kept in ours
_STDERR_TAIL = 64 * 1024

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
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
    network: a URL, a git address (`git@host:`, `git::`, `gh:`), or a host and a path without
    a scheme (`github.com/org/repo`, or `example.com/x` when no such local path exists)."""
    text = entry.strip()
    if _SCHEME.match(text) or _SCP.match(text) or text.startswith(("git::", "gh:", "git@")):
        return True
    first, slash, _ = text.partition("/")
    if not slash or not _HOST.match(first):
        return False
    if first.lower() == "github.com":
        return True  # kustomize reads it as a repository even when such a directory exists
    return not (directory / text.split("?", 1)[0]).exists()


def references(file: Path) -> list[tuple[str, str]]:
    """(field, entry) for every file, directory or remote target a kustomization file names.
    Raises KustomizeError when the file cannot be read: what kustomize would read from it is
    then unknown."""
    try:
        documents = load_documents(file.read_text(encoding="utf-8"), str(file))
    except YamlError as exc:
        raise KustomizeError(f"{file}: cannot be read: {exc.reason}") from None
    except UnicodeDecodeError:
        raise KustomizeError(f"{file}: cannot be read: not UTF-8 text") from None
    except OSError as exc:
        raise KustomizeError(f"{file}: cannot be read: {exc.strerror or exc}") from None
    found: list[tuple[str, str]] = []
    for document in documents:
        if document is None:
            continue
        if not isinstance(document, dict):
            raise KustomizeError(f"{file}: not a kustomization (a YAML mapping)")
        for field in REFERENCE_FIELDS:
            value: Any = document.get(field)
            entries = [value] if isinstance(value, str) else value
            for entry in entries if isinstance(entries, list) else []:
                # a multi-line entry is an inline generator or transformer, not a path
                if isinstance(entry, str) and entry.strip() and "\n" not in entry:
                    found.append((field, entry.strip()))
    return found


def check_kustomization(directory: Path, settings: KustomizeSettings) -> None:
    """Read the kustomization of `directory` and, through its local bases, every one it
    reaches; raise KustomizeError naming the kustomization file and entry that is remote (unless
    allowed) or resolves outside `settings.confined_to`."""
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
    seen: set[Path] = set()
    pending = [directory.resolve()]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        file = kustomization_file(current)
        if file is None:
            continue
        try:
            entries = references(file)
        except KustomizeError:
            if settings is not None:
                raise
            continue
        for field, entry in entries:
            if is_remote(entry, current):
                if settings is not None and not settings.allow_remote:
                    raise KustomizeError(
                        f"{_shown(file, root)}: {field} entry {entry!r} is remote (kustomize "
                        "would fetch it from the network); --kustomize-allow-remote allows it"
                    )
                continue
            try:
                target = (current / entry).resolve()
            except (OSError, ValueError):
                continue  # no such path: kustomize says so
            if root is not None and not target.is_relative_to(root):
                raise KustomizeError(
                    f"{_shown(file, root)}: {field} entry {entry!r} resolves outside the "
                    "repository; with --git, a kustomization may only name the repository's "
                    "own files"
                )
            if target.is_dir():
                pending.append(target)
    return seen


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
    argv = _command(directory, env.get("PATH", os.defpath))
    what = " ".join([Path(argv[0]).name, argv[1]])
    if budget is not None:
        budget.check(f"{what} {directory}")
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
