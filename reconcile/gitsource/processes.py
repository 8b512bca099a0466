"""The git processes of one checkout: started with our environment, each in a process group of
its own, and killed with that group at the command's timeout, at the end of the run's budget and
when SIGINT / SIGTERM interrupts the run.

GitPython starts every git process (`gitpython.GuardedGit` hands them all here), but it cannot do
this part itself: `Git.execute` builds each process's environment from a copy of `os.environ`
(`Git.update_environment` and `custom_environment` add to that copy and never take from it, so
inherited `GIT_*` variables would reach git), and its `kill_after_timeout` kills the process and
the children it lists at that moment, not the process group (git's transport helpers, ssh, the
local `upload-pack`), and only at the command's own timeout, never at the run's end or a signal.
So the watcher here does: a thread looks at the live processes every `WATCH_INTERVAL` seconds
and SIGKILLs the group of any that is past its time, or of all when the run is over. GitPython's
long-lived `cat-file --batch` processes are started here too, with no timeout of their own (they
idle between reads): the run's end, a signal and `close()` kill them like the rest.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from typing import IO, Any

from reconcile.budget import Budget
from reconcile.gitsource.errors import GitSourceError

#: How often the watcher looks at the live processes, in seconds.
WATCH_INTERVAL = 0.05
_PROTOCOLS = ("http", "https", "ssh", "git", "file")  # git's names for what checks.SCHEMES reach
# Inherited variables that would point git elsewhere or run something: never passed on.
_KEPT_GIT_VARIABLES = frozenset({"GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "GIT_SSL_NO_VERIFY"})


def environment(git_dir: str, credentials: Mapping[str, str]) -> dict[str, str]:
    """The environment git runs with: the process's, less the GIT_* variables that would point
    it elsewhere or run something, plus ours: the cache's repository as GIT_DIR (git never
    searches for one), the credentials, safe protocol settings, no hooks, and git's messages
    in English (GitPython reads fetch's)."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in _KEPT_GIT_VARIABLES
    }
    env.update(credentials)
    env.update(GIT_DIR=git_dir, GIT_TERMINAL_PROMPT="0", LANGUAGE="C", LC_ALL="C")
    count = int(env.get("GIT_CONFIG_COUNT", "0"))
    # only the transports a URL may name (check_url): `ext::` and other helpers never run
    settings = [("protocol.allow", "never"), ("core.hooksPath", os.devnull)]
    settings += [(f"protocol.{name}.allow", "always") for name in _PROTOCOLS]
    for key, value in settings:
        env[f"GIT_CONFIG_KEY_{count}"] = key
        env[f"GIT_CONFIG_VALUE_{count}"] = value
        count += 1
    env["GIT_CONFIG_COUNT"] = str(count)
    return env


class _Watched:
    def __init__(self, process: subprocess.Popen[Any], limit: float) -> None:
        self.process = process
        self.limit = limit
        self.deadline = time.monotonic() + limit


class ProcessGuard:
    """Thread-safe. `stops` counts the processes it killed; `stopped` says why it last did."""

    def __init__(self, env: Mapping[str, str], timeout: float, budget: Budget) -> None:
        self.env = dict(env)
        self.timeout = timeout
        self.budget = budget
        self.stops = 0
        self.stopped = ""
        self._lock = threading.Lock()
        self._live: list[_Watched] = []
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def start(
        self,
        args: list[str],
        *,
        cwd: str | None,
        stdin: int | IO[Any] | None,
        stdout: int,
        text: bool,
        persistent: bool,
        extra_env: Mapping[str, str] | None = None,
    ) -> subprocess.Popen[Any]:
        """`args` started in a session of its own; `persistent`: a process that serves many
        requests (no timeout of its own). BudgetExhausted when the run has no time left."""
        what = f"git {args[1]}" if len(args) > 1 else "git"
        self.budget.check(what)
        limit = math.inf if persistent else min(self.timeout, self.budget.remaining())
        try:
            process = subprocess.Popen(
                args,
                cwd=cwd,
                env={**self.env, **(extra_env or {})},
                stdin=stdin if stdin is not None else subprocess.DEVNULL,
                stdout=stdout,
                stderr=subprocess.PIPE,
                text=text,
                start_new_session=True,
            )
        except OSError as exc:
            raise GitSourceError(f"git cannot be run: {exc.strerror or exc}") from None
        with self._lock:
            self._live.append(_Watched(process, limit))
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="git-watch", daemon=True)
                self._thread.start()
        return process

    def why_stopped(self, since: int) -> str | None:
        """Why a process was killed after `stops` was `since` (None: none was)."""
        with self._lock:
            return self.stopped if self.stops > since else None

    def close(self) -> None:
        """Kill what is still running (GitPython's cat-file processes among them)."""
        self._done.set()
        with self._lock:
            live, self._live = self._live, []
        for watched in live:
            _kill_group(watched.process)
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                watched.process.wait(5)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)

    def _watch(self) -> None:
        while not self._done.wait(WATCH_INTERVAL):
            self.sweep()

    def sweep(self) -> None:
        """Forget the processes that ended; kill those past their time."""
        now = time.monotonic()
        ended = self.budget.expired
        with self._lock:
            kept = []
            for watched in self._live:
                if _leader_exited(watched.process):
                    # what is left of its group (git's remote helper, holding the pipes the
                    # reader waits on) would keep the run waiting for ever: it goes too
                    _kill_group(watched.process)
                    continue
                if not (ended or now >= watched.deadline):
                    kept.append(watched)
                    continue
                # why, before the kill: the process's reader may wake as soon as it dies
                self.stopped = (
                    f"stopped, {self.budget.why()}"
                    if ended
                    else f"no answer within {watched.limit:g}s"
                )
                self.stops += 1
                _kill_group(watched.process)
            self._live = kept


def _leader_exited(process: subprocess.Popen[Any]) -> bool:
    """Whether the process ended, without reaping it: while it is an unreaped zombie its pid,
    and so its group's id, cannot be given to another process, so its group can be killed."""
    if process.returncode is not None:
        return True
    try:
        info = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:  # reaped by its reader meanwhile
        return True
    return info is not None


def _kill_group(process: subprocess.Popen[Any]) -> None:
    if process.returncode is not None:  # reaped: its pid (and group id) may be another's now
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
