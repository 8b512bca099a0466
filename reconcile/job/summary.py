"""The end-of-run summary line(s) in the log."""

from __future__ import annotations

import logging

from reconcile.results import RunResult

log = logging.getLogger("reconcile")


def log_summary(result: RunResult) -> None:
    last = result.passes[-1] if result.passes else None
    parents = len(last.parents()) if last else 0
    applied = dict(result.actions_by_kind(applied=True))
    pending = dict(last.actions_by_kind(applied=False)) if last else {}
    for error in result.errors:
        log.error("%s", error)
    for due in result.due_next_run:
        log.info("due at the next run: %s", due)
    dry = "server dry run" if result.server_dry_run else "dry run"
    log.info(
        "run %s",
        "converged" if result.converged else (dry if result.dry_run else "not converged"),
        extra={
            "passes": len(result.passes),
            "parents": parents,
            "applied": applied,
            "pending": pending,
            "hook_calls": result.hook_calls,
            "requests": result.requests,
            "errors": len(result.errors),
            "seconds": round(result.duration, 3),
        },
    )
