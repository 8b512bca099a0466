"""When a run's next pass starts, decided from the last one (pure): at once after writes; after
a backoff when a request failed for a reason that may pass; after the poll interval while it
waits on the cluster; at the earliest resync asked for; never, once converged."""

from __future__ import annotations

from reconcile.results import PassResult

# A pass whose only problems may pass (the API server did not answer, a conflict, throttling, a
# server error) is followed by another after RETRY_DELAY, doubling up to MAX_RETRY_DELAY, at
# most MAX_RETRY_PASSES times in a row: a lasting failure does not keep a run going.
RETRY_DELAY = 0.5
MAX_RETRY_DELAY = 8.0
MAX_RETRY_PASSES = 5


def next_pass(
    current: PassResult, now: float, retries: int, poll_interval: float
) -> tuple[float | None, list[str], int]:
    """When the next pass should start (None: converged), which resyncs ask for it, and the
    retries in a row after it (`retries`: those before it)."""
    failed = current.transient_failures
    if not failed:
        retries = 0
    if current.writes:
        return now, [], retries
    candidates: list[tuple[float, str]] = []
    if failed and retries < MAX_RETRY_PASSES:
        delay = min(RETRY_DELAY * 2**retries, MAX_RETRY_DELAY)
        retries += 1
        candidates.append((now + delay, f"retrying after a transient failure: {failed[0]}"))
    if current.waits:
        candidates.append((now + poll_interval, "waiting: " + current.waits[0]))
    for controller in current.controllers:
        if controller.resync_period:
            candidates.append(
                (
                    now + controller.resync_period,
                    f"{controller.kind or 'Controller'} {controller.name}: "
                    "resyncPeriodSeconds "
                    f"{controller.resync_period:g}",
                )
            )
        for parent in controller.parents:
            if parent.resync_after:
                candidates.append(
                    (
                        now + parent.resync_after,
                        f"{parent.parent}: resyncAfterSeconds {parent.resync_after:g}",
                    )
                )
    if not candidates:
        return None, [], retries
    candidates.sort()
    return candidates[0][0], [what for _, what in candidates], retries
