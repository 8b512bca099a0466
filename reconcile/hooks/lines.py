"""Long-lived command hooks (`protocol: lines`): one JSON request per line on the program's
stdin, one JSON response per line on its stdout.

A program is started on a hook's first call and kept for the next ones: at most `workers`
processes per hook, each serving one call at a time. A process that exits, writes a line that
is not JSON, answers over the size limit or does not answer within the hook's timeout has its
process group killed; the call fails as an exec call would, and the next call starts a new
process. `close()` kills every process group at the end of the run (and, should the run end
without it, at the interpreter's exit).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import selectors
import subprocess
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import Any

from reconcile.budget import Budget, BudgetExhausted
from reconcile.hooks.command import (
    KILL_GRACE,
    POLL,
    BoundedOutput,
    log_stderr,
    read_some,
    signal_name,
    spawn,
    stop_process_group,
    write_some,
)
from reconcile.hooks.errors import (
    MAX_RESPONSE_BYTES,
    HookError,
    HookResult,
    one_line,
    tail_excerpt,
)
from reconcile.hooks.parse import parse_object, remember_secrets_in
from reconcile.records import dataclass
from reconcile.specs.hooks import CommandSpec, HookSpec

log = logging.getLogger("reconcile.hooks")

#: At the end of the run, how long idle processes get to exit on their own once their stdin is
#: closed, before their process groups are killed.
CLOSE_GRACE = 0.5

_PoolKey = tuple[str, str, CommandSpec]


@dataclass
class _Pool:
    """One hook's processes: those waiting for a call, and how many exist (idle or busy)."""

    idle: list[subprocess.Popen[bytes]] = field(default_factory=list)
    started: int = 0


@dataclass
class _Exchange:
    """One call's traffic: the response line once it is whole, stdout beyond it, stderr."""

    output: BoundedOutput
    line: bytes | None = None
    pending: bytearray = field(default_factory=bytearray)
    extra: bool = False  # bytes after the response line: the process is out of step
    stdout_closed: bool = False
    timed_out: bool = False
    bounded: bool = False  # the budget cut the call's timeout short


class LinesTransport:
    """Runs `protocol: lines` command hooks over a pool of long-lived processes. Thread-safe."""

    def __init__(
        self,
        *,
        base_dir: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
        budget: Budget | None = None,
        workers: int = 8,
    ) -> None:
        self.base_dir = base_dir
        self._clock = clock
        self._budget = budget or Budget()
        self._workers = max(1, workers)
        self._changed = threading.Condition()
        self._pools: dict[_PoolKey, _Pool] = {}
        self._live: set[subprocess.Popen[bytes]] = set()
        # whatever happens to the run, no process outlives the interpreter
        weakref.finalize(self, _kill_all, self._live)

    @property
    def processes(self) -> list[subprocess.Popen[bytes]]:
        """The processes running now (idle or serving a call)."""
        with self._changed:
            return list(self._live)

    def call(self, hook: HookSpec, spec: CommandSpec, request: dict[str, Any]) -> HookResult:
        start = self._clock()
        what = f"{hook.owner}: {hook.name} hook {hook.target}"
        self._budget.check(what)
        # ASCII only: no line separator of any kind inside the line, whatever reads it
        line = json.dumps(request, separators=(",", ":")).encode("ascii") + b"\n"
        key = (hook.owner, hook.name, spec)
        proc = self._acquire(hook, spec, key, what)
        exchange: _Exchange | None = None
        refused_line = False
        try:
            exchange = self._exchange(proc, line, self._budget.bound(spec.timeout), spec.timeout)
            response = self._answer(hook, spec, proc, exchange, what)
            if exchange.extra:
                log.warning("%s wrote more than one line for one request: process restarted", what)
            log.debug("%s answered in %.3fs", what, self._clock() - start)
            return HookResult(response, self._clock() - start)
        except HookError as exc:
            refused_line = exc.reason == "bad-json"
            raise
        finally:
            # a well-formed line that is not an acceptable answer leaves the process in step
            in_step = (
                exchange is not None
                and exchange.line is not None
                and not exchange.extra
                and not exchange.output.too_large
                and not refused_line
            )
            self._release(key, proc, in_step)

    def close(self) -> None:
        """Stop every process: stdin closed, a short grace, then its process group killed."""
        with self._changed:
            procs = list(self._live)
            self._live.clear()
            self._pools.clear()
            self._changed.notify_all()
        for proc in procs:
            if proc.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.stdin.close()
        deadline = time.monotonic() + CLOSE_GRACE
        for proc in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        for proc in procs:
            stop_process_group(proc)

    def _acquire(
        self, hook: HookSpec, spec: CommandSpec, key: _PoolKey, what: str
    ) -> subprocess.Popen[bytes]:
        """An idle process of the hook, a new one while fewer than `workers` exist, or, once
        one is given back, that one."""
        with self._changed:
            while True:
                pool = self._pools.setdefault(key, _Pool())
                while pool.idle:
                    proc = pool.idle.pop()
                    if _still_in_step(proc):
                        return proc
                    log.info("%s: its process ended while idle; starting another", what)
                    self._forget(key, proc)
                if pool.started < self._workers:
                    pool.started += 1
                    break
                self._budget.check(what)
                self._changed.wait(POLL)
        try:
            proc = spawn(hook, spec, self.base_dir)
        except BaseException:
            with self._changed:
                pool.started -= 1
                self._changed.notify()
            raise
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            assert pipe is not None
            os.set_blocking(pipe.fileno(), False)
        with self._changed:
            self._live.add(proc)
        log.debug("%s: started process %d", what, proc.pid)
        return proc

    def _release(self, key: _PoolKey, proc: subprocess.Popen[bytes], keep: bool) -> None:
        with self._changed:
            pool = self._pools.get(key)
            if keep and pool is not None and proc in self._live:
                pool.idle.append(proc)
                self._changed.notify()
                return
            self._forget(key, proc)
        stop_process_group(proc)

    def _forget(self, key: _PoolKey, proc: subprocess.Popen[bytes]) -> None:
        """(with the lock held) `proc` no longer counts towards its hook's processes."""
        pool = self._pools.get(key)
        if pool is not None and proc in self._live:
            pool.started -= 1
        self._live.discard(proc)
        self._changed.notify()

    def _exchange(
        self, proc: subprocess.Popen[bytes], line: bytes, timeout: float, spec_timeout: float
    ) -> _Exchange:
        """Write the request line and read until a whole response line, the end of stdout,
        the timeout or the run's end; stderr read meanwhile (its tail kept, bounded)."""
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        exchange = _Exchange(BoundedOutput(MAX_RESPONSE_BYTES))
        exchange.bounded = timeout < spec_timeout
        pending = memoryview(line)
        pipes = selectors.DefaultSelector()
        pipes.register(proc.stdout, selectors.EVENT_READ, "stdout")
        pipes.register(proc.stderr, selectors.EVENT_READ, "stderr")
        pipes.register(proc.stdin, selectors.EVENT_WRITE, "stdin")
        deadline = time.monotonic() + timeout
        try:
            while exchange.line is None and not exchange.stdout_closed:
                now = time.monotonic()
                if now >= deadline or self._budget.interrupted_by:
                    exchange.timed_out = True
                    return exchange
                for key, _ in pipes.select(timeout=min(POLL, deadline - now)):
                    if key.data == "stdin":
                        pending = write_some(proc.stdin, pending)
                        if not pending:
                            pipes.unregister(proc.stdin)
                        continue
                    chunk = read_some(key.fileobj)  # type: ignore[arg-type]
                    if chunk is None:
                        continue
                    if not chunk:
                        pipes.unregister(key.fileobj)
                        exchange.stdout_closed |= key.data == "stdout"
                        continue
                    if key.data == "stderr":
                        exchange.output.add("stderr", chunk)
                    else:
                        self._take_stdout(exchange, chunk)
                        if exchange.output.too_large:
                            return exchange
            # what the process wrote to stderr before its answer is already in the pipe
            _drain(proc.stderr, exchange.output)
            return exchange
        finally:
            pipes.close()

    @staticmethod
    def _take_stdout(exchange: _Exchange, chunk: bytes) -> None:
        searched = len(exchange.pending)
        exchange.pending += chunk
        end = exchange.pending.find(b"\n", searched)
        if end < 0:
            exchange.output.too_large = len(exchange.pending) > MAX_RESPONSE_BYTES
            return
        exchange.line = bytes(exchange.pending[:end])
        exchange.extra = end + 1 < len(exchange.pending)
        if exchange.extra:  # dropped, but what it says of Secrets is scrubbed from stderr
            remember_secrets_in(exchange.pending[end + 1 :])
        exchange.pending.clear()
        exchange.output.too_large = end > MAX_RESPONSE_BYTES

    def _answer(
        self,
        hook: HookSpec,
        spec: CommandSpec,
        proc: subprocess.Popen[bytes],
        exchange: _Exchange,
        what: str,
    ) -> dict[str, Any]:
        output = exchange.output
        if output.too_large:
            mib = MAX_RESPONSE_BYTES // (1024 * 1024)
            raise HookError(
                hook,
                "too-large",
                f"response line over the {mib} MiB limit on a hook (process group killed)",
            )
        if exchange.timed_out:
            if self._budget.expired and (exchange.bounded or self._budget.interrupted_by):
                raise BudgetExhausted(f"{what} (process group killed)", self._budget.why())
            raise HookError(
                hook,
                "timeout",
                f"did not answer within the {spec.timeout:g}s timeout (process group killed)",
            )
        if exchange.line is None:
            remember_secrets_in(exchange.pending)
            code = _exit_status(proc, output)
            tail = tail_excerpt(output.stderr_tail, cut_before=output.stderr_cut)
            if code is None:
                detail = "closed its stdout without answering"
            elif code < 0:
                detail = f"killed by signal {signal_name(-code)} without answering"
            else:
                detail = f"exited with status {code} without answering"
            detail += f": {one_line(tail.splitlines()[-1])}" if tail else " (no stderr)"
            raise HookError(hook, "exit-status", detail, status=code, excerpt=tail)
        try:
            return parse_object(hook, exchange.line, "response line")
        finally:
            log_stderr(hook, output)


def _still_in_step(proc: subprocess.Popen[bytes]) -> bool:
    """An idle process still running, with nothing unread on its stdout (a line written
    while no call was waiting would be taken for the next call's answer). What it wrote to
    stderr meanwhile belongs to no call: dropped."""
    assert proc.stdout is not None and proc.stderr is not None
    if proc.poll() is not None:
        return False
    _drain(proc.stderr, BoundedOutput(0))
    return read_some(proc.stdout) is None


def _drain(pipe: Any, output: BoundedOutput) -> None:
    """Whatever a pipe holds now, without waiting, into `output`'s stderr tail."""
    while True:
        try:
            chunk = read_some(pipe)
        except (OSError, ValueError):
            return
        if not chunk:
            return
        output.add("stderr", chunk)


def _exit_status(proc: subprocess.Popen[bytes], output: BoundedOutput) -> int | None:
    """The exit status of a process whose stdout ended (None: still running after
    KILL_GRACE), and the rest of its stderr."""
    assert proc.stderr is not None
    deadline = time.monotonic() + KILL_GRACE
    while proc.poll() is None and time.monotonic() < deadline:
        _drain(proc.stderr, output)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=0.05)
    _drain(proc.stderr, output)
    return proc.returncode


def _kill_all(procs: set[subprocess.Popen[bytes]]) -> None:
    for proc in list(procs):
        stop_process_group(proc)
    procs.clear()
