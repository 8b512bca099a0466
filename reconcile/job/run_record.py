"""The run record: after each run (not dry runs), one small ConfigMap that says what the run
did, for `kubectl get` and `reconcile status`: when it started and ended, its outcome and
exit code, what it changed by action, its first errors (scrubbed), the git commit it applied
and its shard. By default it sits beside the run's Lease, under the same name, so the Role
that lets a run take its lock lets it write its record.

A run skipped because another holds the lock writes none: the record is the holder's.

A record carries a mark, the label `reconcile.dev/run-record: "true"`, which only a record has:
a ConfigMap of that name without it is someone else's and is never overwritten (the write fails
naming it), and `reconcile status` reads and reports only marked ConfigMaps. What a record is
said to be (its namespace and name) comes from its metadata, never from its data."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from reconcile import __version__
from reconcile.budget import Budget, BudgetExhausted
from reconcile.cluster.connect import connect_live
from reconcile.cluster.errors import AlreadyExists, ApiError, NotFound
from reconcile.cluster.protocol import Cluster, list_all
from reconcile.config import ReconcileSettings, RunConfig
from reconcile.objects.meta import Obj, metadata
from reconcile.results import RunResult
from reconcile.secret_values import scrub

log = logging.getLogger(__name__)

RECORD_LABEL = "reconcile.dev/run-record"
RECORD_MARK = "true"
MANAGED_BY = "app.kubernetes.io/managed-by"
ERRORS_KEPT = 5
ERROR_CHARS = 500

# the record's keys, in the order `reconcile status` shows them
FIELDS = (
    "startTime",
    "endTime",
    "outcome",
    "exitCode",
    "shard",
    "holder",
    "gitCommit",
    "gitRef",
    "gitUrl",
    "passes",
    "converged",
    "applied",
    "failed",
    "errorCount",
    "errors",
    "version",
)


def record_data(
    result: RunResult,
    exit_code: int,
    *,
    started: datetime,
    ended: datetime,
    holder: str,
    version: str,
) -> dict[str, str]:
    """The record's `data`: strings only, as a ConfigMap holds them."""
    errors = result.errors
    applied = result.actions_by_kind(applied=True)
    failed = sum(
        1
        for p in result.passes
        for parent in p.parents()
        for a in parent.actions
        if a.error and a.attempted
    )
    data = {
        "startTime": _stamp(started),
        "endTime": _stamp(ended),
        "outcome": outcome_of(result, exit_code),
        "exitCode": str(exit_code),
        "shard": result.shard or "",
        "holder": holder,
        "gitCommit": result.source.commit if result.source else "",
        "gitRef": result.source.ref if result.source else "",
        "gitUrl": result.source.url if result.source else "",
        "passes": str(len(result.passes)),
        "converged": "true" if result.converged else "false",
        "applied": json.dumps(dict(sorted(applied.items())), separators=(",", ":")),
        "failed": str(failed),
        "errorCount": str(len(errors)),
        "errors": "\n".join(_short(scrub(e)) for e in errors[:ERRORS_KEPT]),
        "version": version,
    }
    return {k: v for k, v in data.items() if v != ""}


def outcome_of(result: RunResult, exit_code: int) -> str:
    """One word: succeeded, failed, interrupted, or stopped (the budget ended)."""
    if result.interrupted in ("SIGINT", "SIGTERM"):
        return "interrupted"
    if result.interrupted:
        return "stopped"
    return "succeeded" if exit_code == 0 else "failed"


class NotARecord(ApiError):
    """A ConfigMap of the record's name that is not a run record (no mark): left as it is."""

    default_reason = "NotARunRecord"

    def __init__(self, namespace: str, name: str) -> None:
        super().__init__(
            f"ConfigMap {namespace}/{name} is not a run record (it has no label "
            f"{RECORD_LABEL}={RECORD_MARK}): it is someone else's and is left as it is; name "
            "another ConfigMap with --run-record"
        )

    def __str__(self) -> str:
        return self.message


def is_record(obj: Obj) -> bool:
    """Whether `obj` carries the mark every run record has (and nothing else should)."""
    labels = metadata(obj).get("labels")
    return isinstance(labels, dict) and labels.get(RECORD_LABEL) == RECORD_MARK


def write_record(cluster: Cluster, namespace: str, name: str, data: dict[str, str]) -> None:
    """Create the record, or replace a record's data. A ConfigMap of that name without the
    mark is someone else's: NotARecord, and it is not touched. Raises ApiError."""
    configmaps = cluster.discover("v1", "configmaps")
    labels = {RECORD_LABEL: RECORD_MARK, MANAGED_BY: "reconcile"}
    for _ in range(2):
        try:
            current = cluster.get(configmaps, name, namespace=namespace)
        except NotFound:
            body: Obj = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": namespace, "labels": labels},
                "data": data,
            }
            try:
                cluster.create(configmaps, body)
            except AlreadyExists:
                continue  # made meanwhile, by whom is read again
            return
        if not is_record(current):
            raise NotARecord(namespace, name)
        meta = metadata(current)
        meta["labels"] = {**(meta.get("labels") or {}), **labels}
        current["data"] = data
        # the read's resourceVersion: a ConfigMap swapped in meanwhile is a Conflict, not lost
        cluster.update(configmaps, current)
        return
    raise NotARecord(namespace, name)


def read_records(cluster: Cluster, namespace: str, name: str | None = None) -> list[Obj]:
    """The run records of a namespace (or the one named), by name: only marked ConfigMaps.
    Raises ApiError (NotFound, NotARecord for a named ConfigMap that is not a record)."""
    configmaps = cluster.discover("v1", "configmaps")
    if name is not None:
        found = cluster.get(configmaps, name, namespace=namespace)
        if not is_record(found):
            raise NotARecord(namespace, name)
        return [found]
    listed = list_all(
        cluster, configmaps, namespace=namespace, label_selector=f"{RECORD_LABEL}={RECORD_MARK}"
    )
    # the selector is the server's to apply: a record is also checked here
    return sorted(
        (o for o in listed.items if is_record(o)), key=lambda o: str(metadata(o).get("name"))
    )


def record_error(exc: ApiError, namespace: str, name: str) -> str:
    return f"the run record (ConfigMap {namespace}/{name}) could not be written: {exc}"


def _stamp(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _short(text: str) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= ERROR_CHARS else one_line[: ERROR_CHARS - 1] + "…"


def describe(record: Obj) -> dict[str, Any]:
    """A record as `reconcile status` shows it: its namespace and name from its metadata, then
    the record's own fields (FIELDS, in that order, strings only). Other data keys are not
    ours to show, and none of them can rename the record."""
    data = record.get("data")
    data = data if isinstance(data, dict) else {}
    fields = {k: data[k] for k in FIELDS if isinstance(data.get(k), str)}
    meta = metadata(record)
    return {"namespace": str(meta.get("namespace")), "name": str(meta.get("name")), **fields}


RECORD_SECONDS = 5.0  # the least time a run record is given, past the budget if need be


def run_record_place(settings: ReconcileSettings) -> tuple[str, str] | None:
    """(namespace, name) of the run record: `--run-record`, else the Lease's (each shard's
    its own, as its Lease is)."""
    where = settings.run_record or settings.lock
    if where is None or where == "none":
        return None
    from reconcile.runner.lock import shard_lock_name  # --lock and --run-record runs only

    namespace, _, name = where.partition("/")
    return namespace, shard_lock_name(name, settings.shard)


def write_run_record(
    result: RunResult, code: int, config: RunConfig, budget: Budget, started: datetime
) -> bool:
    """The run record, for a run that wrote (or tried to) in a real cluster; False (logged)
    when it could not be written. Written within the budget's reserve for last words (at
    least a few seconds: an interrupted run's record matters most)."""
    place = run_record_place(config.reconcile)
    if place is None or config.reconcile.dry_run or config.local.enabled or result.skipped:
        return True
    from reconcile.runner.lock import default_holder  # --lock and --run-record runs only

    namespace, name = place
    data = record_data(
        result,
        int(code),
        started=started,
        ended=datetime.now(UTC),
        holder=config.reconcile.lock_holder or default_holder(),
        version=__version__,
    )
    closing = Budget(max(budget.closing_remaining(), RECORD_SECONDS))
    try:
        write_record(connect_live(config.connection, closing, 1), namespace, name, data)
    except (ApiError, BudgetExhausted) as exc:
        message = exc if isinstance(exc, BudgetExhausted) else record_error(exc, namespace, name)
        log.error("%s", message)
        return False
    log.info("wrote the run record: ConfigMap %s/%s", namespace, name)
    return True
