"""Local command hooks: the request JSON on stdin, the response JSON on stdout. No shell."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reconcile.api.hooks import CommandSpec, HookSpec
from reconcile.hooks.errors import HookError, HookResult, one_line, tail_excerpt
from reconcile.hooks.parse import parse_object

log = logging.getLogger("reconcile.hooks")

#: After killing a timed-out command's process group, how long to wait for its pipes to close.
KILL_GRACE = 2.0


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


class CommandTransport:
    """Runs command hooks; thread-safe (it keeps no state between calls)."""

    def __init__(
        self, *, base_dir: Path | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.base_dir = base_dir
        self._clock = clock

    def call(self, hook: HookSpec, spec: CommandSpec, request: dict[str, Any]) -> HookResult:
        start = self._clock()
        data = json.dumps(request, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        proc = self._spawn(hook, spec)
        try:
            stdout, stderr = proc.communicate(data, timeout=spec.timeout)
        except subprocess.TimeoutExpired:
            _stop(proc)
            raise HookError(
                hook,
                "timeout",
                f"did not finish within the {spec.timeout:g}s timeout (process group killed)",
            ) from None
        except BaseException:
            _stop(proc)
            raise

        code = proc.returncode
        log.debug(
            "%s: %s hook %s exited %d in %.3fs",
            hook.owner,
            hook.name,
            hook.target,
            code,
            self._clock() - start,
        )
        if code != 0:
            tail = tail_excerpt(stderr)
            if code < 0:
                detail = f"killed by signal {_signal_name(-code)}"
            else:
                detail = f"exited with status {code}"
            detail += f": {one_line(tail.splitlines()[-1])}" if tail else " (no stderr)"
            raise HookError(hook, "exit-status", detail, status=code, excerpt=tail)
        if stderr and log.isEnabledFor(logging.DEBUG):
            log.debug("%s: %s hook stderr: %s", hook.owner, hook.name, tail_excerpt(stderr))
        response = parse_object(hook, stdout, "stdout")
        return HookResult(response, self._clock() - start)

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


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Kill the command's whole process group and reap it; give up on pipes still held open
    (by a descendant that left the group) after KILL_GRACE seconds."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    try:
        proc.communicate(timeout=KILL_GRACE)
    except subprocess.TimeoutExpired:
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        proc.kill()
        proc.wait()


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
