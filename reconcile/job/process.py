"""The process a run lives in: SIGINT and SIGTERM stop the run at its next safe point (a report
still follows), its memory stays private from the hooks it starts, and its standard streams
write whatever text they are given."""

from __future__ import annotations

import contextlib
import ctypes
import logging
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType

from reconcile.budget import Budget

log = logging.getLogger("reconcile")

PR_SET_DUMPABLE = 4  # <linux/prctl.h>


@contextlib.contextmanager
def stop_on_signals(budget: Budget) -> Iterator[None]:
    """SIGINT / SIGTERM (what a CronJob's deadline and `kubectl delete job` send) cancel the
    budget: the run stops at its next safe point and still reports. A second signal ends the
    process at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        signal.signal(signum, signal.SIG_DFL)
        log.warning(
            "%s received: stopping at the next safe point and writing the report "
            "(send it again to stop at once)",
            name,
        )
        budget.cancel(name)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def keep_process_private() -> None:
    """On Linux, mark this process not dumpable: a command hook, running as the same user,
    then cannot read the run's environment (`/proc/<pid>/environ`, git tokens among it) or
    attach to it. Programs it starts are dumpable again after their exec. A hook running as
    root (CAP_SYS_PTRACE) is not held back by this."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def writes_any_text() -> None:
    """Standard output and error write what they cannot encode as escapes (`\\ud800`), never
    fail on it: whatever reached a report or a log line, the report is still written."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")
