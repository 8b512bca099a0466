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
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO

from reconcile.budget import Budget, BudgetExhausted
from reconcile.config import KustomizeSettings
from reconcile.files.kustomize_check import (
    KUSTOMIZATION_FILES,
    KustomizeError,
    check_kustomization,
    is_remote,
    kustomization_file,
    kustomization_roots,
    references,
)
from reconcile.files.offline import IsolationUnavailable, offline_command, offline_environment
from reconcile.files.reader import MAX_TEXT_BYTES
from reconcile.objects.lazy_pattern import on_first_use
from reconcile.objects.terminal import printable
from reconcile.secret_values import scrub
from reconcile.specs.hook_env import in_base

log = logging.getLogger(__name__)

RENDER_TIMEOUT = 120.0  # seconds, and never beyond the run's budget
MESSAGE_LIMIT = 500  # characters of kustomize's own error kept in ours
_STDERR_TAIL = 64 * 1024

# kubectl's log header and wrapping around the error: `E1126 11:37:08.019724   15532 run.go:72]
# "command failed" err=<` ... `>`
_KLOG = on_first_use(r"^[IWEF][0-9]{4} [0-9:.]+\s+[0-9]+ [^\]]*\]\s*")
_ERROR_START = on_first_use(r'^(Error: |error: |"command failed")')


__all__ = [
    "KUSTOMIZATION_FILES",
    "KustomizeError",
    "check_kustomization",
    "is_remote",
    "kustomization_file",
    "kustomization_roots",
    "references",
    "render",
]


# --- rendering ---------------------------------------------------------------------------------


def render(directory: Path, settings: KustomizeSettings, budget: Budget | None = None) -> str:
    """The YAML kustomize renders for `directory` (named as given in messages). Raises
    KustomizeError, or BudgetExhausted when the run's budget ends or a signal stops it."""
    check_kustomization(directory, settings, budget)
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
                f"here: {exc}; --kustomize-isolation none runs it without (see docs/kustomize.md)"
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
    lines = [_KLOG().sub("", line).strip() for line in stderr.splitlines()]
    lines = [line for line in lines if line and line != ">"]
    starts = [index for index, line in enumerate(lines) if _ERROR_START().match(line)]
    if starts:
        lines = lines[starts[-1] :]
    text = " ".join(" ".join(lines).split())
    text = text.removeprefix('"command failed" err=<').strip()
    text = text.removeprefix("Error: ").removeprefix("error: ")
    text = printable(scrub(text))
    if len(text) > MESSAGE_LIMIT:
        text = text[: MESSAGE_LIMIT - 1] + "…"
    return text or f"exited with status {status}"
