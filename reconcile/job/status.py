"""`reconcile status`: read the run records and say how the runs went."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from reconcile.budget import Budget
from reconcile.cluster.connect import connect_live
from reconcile.cluster.errors import ApiError, NotFound
from reconcile.config import ConnectionSettings
from reconcile.job.run_record import (
    ERROR_CHARS,
    ERRORS_KEPT,
    NotARecord,
    describe,
    read_records,
)
from reconcile.objects.terminal import printable

STATUS_SECONDS = 30.0
FIELD_CHARS = ERRORS_KEPT * (ERROR_CHARS + 1)  # the longest a run writes (its errors)


def status_job(
    connection: ConnectionSettings, namespace: str, name: str | None
) -> tuple[list[dict[str, Any]], str, int]:
    """(the records as data, as text, the exit status)."""
    try:
        cluster = connect_live(connection, Budget(STATUS_SECONDS), 1)
        records = [describe(r) for r in read_records(cluster, namespace, name)]
    except NotFound:
        return [], f"no run record {namespace}/{name}\n", 1
    except NotARecord as exc:
        return [], printable(str(exc)) + "\n", 1
    except (ApiError, OSError, ValueError) as exc:
        return [], f"cannot read the run records in {namespace}: {exc}\n", 1
    if not records:
        return (
            [],
            (
                f"no run record in namespace {namespace}: a run writes one after each run when it "
                "holds a --lock (or is given --run-record); -n names another namespace\n"
            ),
            1,
        )
    failed = any(r.get("exitCode") != "0" for r in records)
    return records, "".join(render_record(r) for r in records), 1 if failed else 0


def render_record(record: dict[str, Any], now: datetime | None = None) -> str:
    """A few lines per record, for people: each field as long as a run writes it at most (a
    ConfigMap's data can be a megabyte; a record's errors are five of 500 characters)."""
    errors = str(record.get("errors", "")).splitlines()[:ERRORS_KEPT]
    record = {k: _cut(str(v), FIELD_CHARS) for k, v in record.items()}
    record["errors"] = "\n".join(_cut(line, ERROR_CHARS) for line in errors)
    now = now or datetime.now(UTC)
    started, ended = str(record.get("startTime", "")), str(record.get("endTime", ""))
    took = _seconds_between(started, ended)
    ago = _seconds_between(ended, now.strftime("%Y-%m-%dT%H:%M:%SZ"))
    head = (
        f"{record['namespace']}/{record['name']}: {record.get('outcome', '?')}, exit "
        f"{record.get('exitCode', '?')}, ended {ended or '?'}"
        + (f" ({_duration(ago)} ago)" if ago is not None else "")
        + (f", took {_duration(took)}" if took is not None else "")
    )
    lines = [head]
    source = []
    if record.get("gitCommit"):
        source.append(
            f"commit {str(record['gitCommit'])[:12]} of {record.get('gitRef', '?')} "
            f"({record.get('gitUrl', '?')})"
        )
    if record.get("shard"):
        source.append(f"shard {record['shard']}")
    if record.get("holder"):
        source.append(f"by {record['holder']}")
    if source:
        lines.append("  " + ", ".join(source))
    lines.append(
        f"  applied {record.get('applied', '{}')}, {record.get('failed', '0')} failed, "
        f"{record.get('passes', '?')} passes, converged {record.get('converged', '?')}"
    )
    errors = [e for e in str(record.get("errors", "")).splitlines() if e]
    if errors:
        count = record.get("errorCount", len(errors))
        lines.append(f"  errors ({count}, first {len(errors)}):")
        lines += [f"    {e}" for e in errors]
    return "".join(printable(line) + "\n" for line in lines)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _seconds_between(start: str, end: str) -> float | None:
    try:
        first = datetime.strptime(start, "%Y-%m-%dT%H:%M:%SZ")
        last = datetime.strptime(end, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None
    return (last - first).total_seconds()


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    if seconds < 172800:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"
