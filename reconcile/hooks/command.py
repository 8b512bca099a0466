"""Local command hooks: the request JSON on stdin, the response JSON on stdout. No shell."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import IO, Any

from reconcile.budget import Budget, BudgetExhausted
from reconcile.hooks.environment import hook_environment
from reconcile.hooks.errors import (
    MAX_RESPONSE_BYTES,
    STDERR_TAIL,
    HookError,
    HookResult,
    one_line,
    tail_excerpt,
)
from reconcile.hooks.parse import parse_object, remember_secrets_in
from reconcile.records import dataclass
from reconcile.secret_values import SEEN
from reconcile.specs.hooks import CommandSpec, HookSpec

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
class BoundedOutput:
    """What a command printed, with bounded memory: stdout up to `limit` (then `too_large`),
    stderr's tail only (`stderr_cut` when its start was dropped)."""

    limit: int
    stdout: list[bytes] = field(default_factory=list)
    stdout_size: int = 0
    too_large: bool = False
    stderr_tail: bytes = b""
    stderr_cut: bool = False
    # the command exited, but a process it started still held its output open: not waited for
    abandoned: bool = False

    def add(self, stream: str, chunk: bytes) -> None:
        if stream == "stdout":
            self.stdout_size += len(chunk)
            if self.stdout_size > self.limit:
                self.too_large = True
                return
            self.stdout.append(chunk)
            return
        joined = self.stderr_tail + chunk
        self.stderr_cut = self.stderr_cut or len(joined) > STDERR_KEEP
        self.stderr_tail = joined[-STDERR_KEEP:]


def log_stderr(hook: HookSpec, output: BoundedOutput) -> None:
    """A call's stderr, at debug level. Logged once the call's answer is read, so that a
    Secret the answer holds is scrubbed from stderr too."""
    if output.stderr_tail and log.isEnabledFor(logging.DEBUG):
        tail = tail_excerpt(output.stderr_tail, cut_before=output.stderr_cut)
        log.debug("%s: %s hook stderr: %s", hook.owner, hook.name, tail)


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
        proc = spawn(hook, spec, self.base_dir)
        try:
            output, finished = self._communicate(proc, data, timeout)
        except BaseException:
            stop_process_group(proc)
            raise
        if output.too_large:
            stop_process_group(proc)
            mib = MAX_RESPONSE_BYTES // (1024 * 1024)
            raise HookError(
                hook, "too-large", f"stdout over the {mib} MiB limit on a hook (process killed)"
            )
        if not finished:
            stop_process_group(proc)
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

        if output.abandoned:
            stop_process_group(proc)
            log.warning(
                "%s: %s hook %s exited, but a process it started still holds its output: "
                "not waited for (its output after the exit is not read)",
                hook.owner,
                hook.name,
                hook.target,
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
            tail = tail_excerpt(stderr, cut_before=output.stderr_cut)
            if code < 0:
                detail = f"killed by signal {signal_name(-code)}"
            else:
                detail = f"exited with status {code}"
            detail += f": {one_line(tail.splitlines()[-1])}" if tail else " (no stderr)"
            raise HookError(hook, "exit-status", detail, status=code, excerpt=tail)
        try:
            response = parse_object(hook, b"".join(output.stdout), "stdout")
        finally:
            log_stderr(hook, output)
        return HookResult(response, self._clock() - start)

    def _communicate(
        self, proc: subprocess.Popen[bytes], data: bytes, timeout: float
    ) -> tuple[BoundedOutput, bool]:
        """Feed stdin and read both outputs in this thread (non-blocking pipes, so nothing is
        ever stuck in a read or write that the run's end could not stop), in steps of at most
        POLL. True when the command exited, and its output ended, within `timeout`; a process
        it started that keeps the output open after it exited is not waited for past
        KILL_GRACE (`abandoned`)."""
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        output = BoundedOutput(MAX_RESPONSE_BYTES)
        pipes = selectors.DefaultSelector()
        for pipe, name in ((proc.stdout, "stdout"), (proc.stderr, "stderr")):
            os.set_blocking(pipe.fileno(), False)
            pipes.register(pipe, selectors.EVENT_READ, name)
        pending = memoryview(data)
        if pending:
            os.set_blocking(proc.stdin.fileno(), False)
            pipes.register(proc.stdin, selectors.EVENT_WRITE, "stdin")
        else:
            proc.stdin.close()
        deadline = time.monotonic() + timeout
        exited_at: float | None = None
        try:
            while True:
                now = time.monotonic()
                if now >= deadline or self._budget.interrupted_by:
                    return output, False
                if exited_at is None and proc.poll() is not None:
                    exited_at = now
                if not any(k.data != "stdin" for k in pipes.get_map().values()):
                    if exited_at is not None:
                        return output, True
                    proc.wait(timeout=min(POLL, deadline - now))  # output closed, still running
                    continue
                if exited_at is not None and now - exited_at > KILL_GRACE:
                    output.abandoned = True
                    return output, True
                for key, _ in pipes.select(timeout=min(POLL, deadline - now)):
                    if key.data == "stdin":
                        pending = write_some(proc.stdin, pending)
                        if not pending:
                            pipes.unregister(proc.stdin)
                            with contextlib.suppress(OSError):
                                proc.stdin.close()
                        continue
                    chunk = read_some(key.fileobj)  # type: ignore[arg-type]
                    if chunk is None:
                        continue
                    if not chunk:
                        pipes.unregister(key.fileobj)
                        continue
                    output.add(key.data, chunk)
                    if output.too_large:
                        return output, True
        except subprocess.TimeoutExpired:
            return output, False
        finally:
            pipes.close()


def spawn(hook: HookSpec, spec: CommandSpec, base_dir: Path | None) -> subprocess.Popen[bytes]:
    """The command started in a process group of its own, with the curated environment
    (hooks/environment.py) and three pipes; HookError 'spawn' when it cannot start."""
    if not spec.argv:
        raise HookError(hook, "spawn", "no command given (argv is empty)")
    working_dir = resolve_working_dir(spec, base_dir)
    if not working_dir.is_dir():
        raise HookError(hook, "spawn", f"working directory {working_dir} does not exist")
    env = hook_environment(spec, os.environ, SEEN.knows)
    program = resolve_program(spec.argv[0], working_dir, env)
    if program is None:
        raise HookError(hook, "spawn", f"cannot start {spec.argv[0]!r}: not found on PATH")
    try:
        return subprocess.Popen(
            spec.argv,
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


def write_some(stdin: IO[bytes], pending: memoryview) -> memoryview:
    """What is left to write after one non-blocking write; nothing once the command closed its
    input (a command need not read it)."""
    try:
        written = os.write(stdin.fileno(), pending[: 64 * 1024])
    except BlockingIOError:
        return pending
    except OSError:
        return pending[:0]
    return pending[written:]


def read_some(pipe: IO[bytes]) -> bytes | None:
    """One non-blocking read: the bytes, b"" at the end, None when there is nothing yet."""
    try:
        return os.read(pipe.fileno(), 64 * 1024)
    except BlockingIOError:
        return None


def stop_process_group(proc: subprocess.Popen[bytes]) -> None:
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


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
