"""Local command hooks: the request JSON on stdin, the response JSON on stdout. No shell."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from reconcile.api.hooks import CommandSpec, HookSpec
from reconcile.budget import Budget, BudgetExhausted
from reconcile.hooks.errors import (
    MAX_RESPONSE_BYTES,
    STDERR_TAIL,
    HookError,
    HookResult,
    one_line,
    tail_excerpt,
)
from reconcile.hooks.parse import parse_object, remember_secrets_in

log = logging.getLogger("reconcile.hooks")

#: After killing a timed-out command's process group, how long to wait for its pipes to close.
KILL_GRACE = 2.0
#: How often a running command is checked for the run's end (budget, SIGTERM).
POLL = 0.2
#: How much of stderr is kept: its tail only, whatever the command prints.
STDERR_KEEP = STDERR_TAIL * 4


def resolve_working_dir(spec: CommandSpec, base_dir: Path | None) -> Path:
    """`working_dir` resolved against `base_dir` (default: the current directory)."""
    base = base_dir if base_dir is not None else Path.cwd()
    if spec.working_dir is None:
        return base.absolute()
    path = Path(spec.working_dir)
    return (path if path.is_absolute() else base / path).absolute()


def resolve_program(name: str, working_dir: Path, env: dict[str, str]) -> str | None:
    """argv[0] resolved as a shell would: an absolute path as is, a name with a '/' relative to
    the working directory, anything else looked up on the command's PATH (relative PATH
    entries, and empty ones, meaning the working directory). None when not found on PATH."""
    if os.path.isabs(name):
        return name
    if "/" in name:
        return str(working_dir / name)
    entries = env.get("PATH", os.defpath).split(os.pathsep)
    path = os.pathsep.join(
        str(working_dir / entry) if not os.path.isabs(entry) else entry for entry in entries
    )
    return shutil.which(name, path=path)


@dataclass
class _Output:
    """What a command printed, read by threads with bounded memory: stdout up to `limit`
    (then `too_large`), stderr's tail only."""

    limit: int
    stdout: list[bytes] = field(default_factory=list)
    stdout_size: int = 0
    too_large: bool = False
    stderr_tail: bytes = b""

    def read_stdout(self, stream: IO[bytes]) -> None:
        while chunk := stream.read1(64 * 1024):  # type: ignore[attr-defined]
            self.stdout_size += len(chunk)
            if self.stdout_size > self.limit:
                self.too_large = True
                return
            self.stdout.append(chunk)

    def read_stderr(self, stream: IO[bytes]) -> None:
        while chunk := stream.read1(64 * 1024):  # type: ignore[attr-defined]
            self.stderr_tail = (self.stderr_tail + chunk)[-STDERR_KEEP:]


class CommandTransport:
    """Runs command hooks; thread-safe (it keeps no state between calls)."""

    def __init__(
        self,
        *,
        base_dir: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
        budget: Budget | None = None,
    ) -> None:
        self.base_dir = base_dir
        self._clock = clock
        self._budget = budget or Budget()

    def call(self, hook: HookSpec, spec: CommandSpec, request: dict[str, Any]) -> HookResult:
        start = self._clock()
        self._budget.check(f"{hook.owner}: {hook.name} hook {hook.target}")
        data = json.dumps(request, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        timeout = self._budget.bound(spec.timeout)
        proc = self._spawn(hook, spec)
        try:
            output, finished = self._communicate(proc, data, timeout)
        except BaseException:
            _stop(proc)
            raise
        if output.too_large:
            _stop(proc)
            mib = MAX_RESPONSE_BYTES // (1024 * 1024)
            raise HookError(
                hook, "too-large", f"stdout over the {mib} MiB limit on a hook (process killed)"
            )
        if not finished:
            _stop(proc)
            if self._budget.expired and (timeout < spec.timeout or self._budget.interrupted_by):
                raise BudgetExhausted(
                    f"{hook.owner}: {hook.name} hook {hook.target} (process group killed)",
                    self._budget.why(),
                )
            raise HookError(
                hook,
                "timeout",
                f"did not finish within the {spec.timeout:g}s timeout (process group killed)",
            )

        code = proc.returncode
        stderr = output.stderr_tail
        log.debug(
            "%s: %s hook %s exited %d in %.3fs",
            hook.owner,
            hook.name,
            hook.target,
            code,
            self._clock() - start,
        )
        if code != 0:
            # A command that failed after writing its response may quote its Secrets on stderr.
            remember_secrets_in(b"".join(output.stdout))
            tail = tail_excerpt(stderr)
            if code < 0:
                detail = f"killed by signal {_signal_name(-code)}"
            else:
                detail = f"exited with status {code}"
            detail += f": {one_line(tail.splitlines()[-1])}" if tail else " (no stderr)"
            raise HookError(hook, "exit-status", detail, status=code, excerpt=tail)
        if stderr and log.isEnabledFor(logging.DEBUG):
            log.debug("%s: %s hook stderr: %s", hook.owner, hook.name, tail_excerpt(stderr))
        response = parse_object(hook, b"".join(output.stdout), "stdout")
        return HookResult(response, self._clock() - start)

    def _communicate(
        self, proc: subprocess.Popen[bytes], data: bytes, timeout: float
    ) -> tuple[_Output, bool]:
        """Feed stdin and read both outputs on threads, waiting for the process in short
        steps so that the run's end (budget, signal) or too much output stops it at once.
        True when it exited and its pipes closed within `timeout`."""
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        output = _Output(MAX_RESPONSE_BYTES)
        threads = [
            threading.Thread(target=_feed, args=(proc.stdin, data), daemon=True),
            threading.Thread(target=output.read_stdout, args=(proc.stdout,), daemon=True),
            threading.Thread(target=output.read_stderr, args=(proc.stderr,), daemon=True),
        ]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + timeout
        while not output.too_large:
            left = deadline - time.monotonic()
            if left <= 0 or self._budget.interrupted_by:
                return output, False
            try:
                proc.wait(timeout=min(POLL, left))
            except subprocess.TimeoutExpired:
                continue
            # Exited: its pipes close unless a descendant that left the group still holds them.
            for thread in threads:
                thread.join(max(0.0, min(deadline - time.monotonic(), KILL_GRACE)))
            return output, not any(t.is_alive() for t in threads)
        return output, True

    def _spawn(self, hook: HookSpec, spec: CommandSpec) -> subprocess.Popen[bytes]:
        if not spec.argv:
            raise HookError(hook, "spawn", "no command given (argv is empty)")
        working_dir = resolve_working_dir(spec, self.base_dir)
        if not working_dir.is_dir():
            raise HookError(hook, "spawn", f"working directory {working_dir} does not exist")
        env = dict(os.environ)
        env.update(spec.env)
        program = resolve_program(spec.argv[0], working_dir, env)
        if program is None:
            raise HookError(hook, "spawn", f"cannot start {spec.argv[0]!r}: not found on PATH")
        try:
            return subprocess.Popen(
                list(spec.argv),
                executable=program,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=working_dir,
                env=env,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            problem = exc.strerror or str(exc)
            raise HookError(hook, "spawn", f"cannot start {program}: {problem}") from None


def _feed(stdin: IO[bytes], data: bytes) -> None:
    with contextlib.suppress(BrokenPipeError, OSError):  # a command need not read its input
        stdin.write(data)
        stdin.close()


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Kill the command's whole process group, reap it and close its pipes (the reader
    threads end with them)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=KILL_GRACE)
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
