"""Prometheus metrics of a run, for batch jobs: pushed to a Pushgateway (`--metrics-pushgateway`)
and/or written in the text format for node-exporter's textfile collector (`--metrics-file`).

Per run (`reconcile_*`): duration, passes, parents synced, actions by kind and state, errors,
API requests by verb and code, exit code, converged, and the time of the run and of the last
successful one. Per hook, Metacontroller's own names and labels, so its dashboards work:
`metacontroller_<hook>_requests_total{url, controller_name, controller_type, code, method}` and
`metacontroller_<hook>_request_duration_histogram_seconds{..., method}` (a command hook's `url`
is its command line, its `method` is `exec`, its `code` the exit status).

A shard's metrics are its own: `shard` in the Pushgateway grouping key and as a label in the
text file. No `_created` series: a batch job's counters start with its run.

`reconcile_last_success_timestamp_seconds` is only set by a run that exited 0 and did its work
(not one skipped because the lock was held: `reconcile_run_skipped` is 1 then): a Pushgateway
keeps the previous value (metrics are added with POST, not replaced), and the text file
carries it over from the file it replaces.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    pushadd_to_gateway,
)
from prometheus_client.exposition import basic_auth_handler, default_handler, generate_latest

from reconcile.objects.redact import split_userinfo
from reconcile.results import RunResult
from reconcile.secret_values import remember_credential, scrub

log = logging.getLogger(__name__)

# A batch job's counters start with the run: `_created` series would only repeat its time.
disable_created_metrics()  # type: ignore[no-untyped-call]

JOB = "reconcile"
LAST_SUCCESS = "reconcile_last_success_timestamp_seconds"
_LAST_SUCCESS_LINE = re.compile(rf"^{LAST_SUCCESS}(?:{{[^}}]*}})? (\S+)$", re.M)


class MetricsError(Exception):
    pass


def run_registry(result: RunResult, exit_code: int, now: float | None = None) -> CollectorRegistry:
    """The run's metrics, in a registry of their own."""
    now = time.time() if now is None else now
    registry = CollectorRegistry()

    def gauge(name: str, help_text: str, value: float) -> None:
        Gauge(name, help_text, registry=registry).set(value)

    gauge("reconcile_run_duration_seconds", "Wall time of the last run.", result.duration)
    gauge("reconcile_run_passes", "Passes of the last run.", len(result.passes))
    parents = {p.parent for pass_ in result.passes for p in pass_.parents()}
    gauge("reconcile_run_parents_synced", "Parents the last run synced.", len(parents))
    gauge("reconcile_run_errors", "Errors of the last run.", len(result.errors))
    gauge("reconcile_run_exit_code", "Exit code of the last run.", exit_code)
    gauge("reconcile_run_converged", "1 when the last run converged.", int(result.converged))
    gauge("reconcile_last_run_timestamp_seconds", "When the last run ended.", now)
    skipped = result.skipped is not None
    gauge("reconcile_run_skipped", "1 when the last run did nothing: its lock was held.", skipped)
    if exit_code == 0 and not skipped:
        # a run skipped because the Lease is held did not reconcile: a lease held for ever
        # must not hide the outage from an alert on this
        gauge(LAST_SUCCESS, "When the last successful run (exit 0) ended.", now)
    actions = Gauge(
        "reconcile_run_actions",
        "Actions of the last run, by kind and state.",
        ["kind", "state"],
        registry=registry,
    )
    for state, applied in (("applied", True), ("pending", False)):
        for kind, count in result.actions_by_kind(applied).items():
            actions.labels(kind, state).inc(count)
    requests = Gauge(
        "reconcile_api_requests",
        "API requests of the last run, by verb and HTTP status (0: no response).",
        ["verb", "code"],
        registry=registry,
    )
    for (verb, code), count in result.request_codes.items():
        requests.labels(verb, code).set(count)
    _hook_metrics(result, registry)
    return registry


def _hook_metrics(result: RunResult, registry: CollectorRegistry) -> None:
    counters: dict[str, Counter] = {}
    histograms: dict[str, Histogram] = {}
    labels = ["url", "controller_name", "controller_type"]
    for pass_ in result.passes:
        for controller in pass_.controllers:
            for parent in controller.parents:
                for call in parent.hooks:
                    hook = re.sub(r"[^a-zA-Z0-9_]", "_", call.hook)
                    if hook not in counters:
                        counters[hook] = Counter(
                            f"metacontroller_{hook}_requests_total",
                            "A counter for outgoing requests from the wrapped client.",
                            [*labels, "code", "method"],
                            registry=registry,
                        )
                        histograms[hook] = Histogram(
                            f"metacontroller_{hook}_request_duration_histogram_seconds",
                            "A histogram of outgoing request latencies.",
                            [*labels, "method"],
                            registry=registry,
                        )
                    common = (scrub(call.target), controller.name, controller.kind)
                    counters[hook].labels(*common, call.code or "0", call.method).inc()
                    histograms[hook].labels(*common, call.method).observe(call.duration)


def write_textfile(path: Path, registry: CollectorRegistry, *, shard: str | None = None) -> None:
    """Atomically replace `path`, keeping the last success time of the file it replaces when
    this run has none. A shard's samples carry a `shard` label: the textfile collector merges
    every file of a node, and two shards' series must not collide."""
    text = generate_latest(registry).decode()
    if shard is not None:
        text = with_label(text, "shard", shard)
    if LAST_SUCCESS not in text and path.is_file():
        previous = _LAST_SUCCESS_LINE.search(path.read_text(encoding="utf-8", errors="replace"))
        if previous is not None:
            sample = f"{LAST_SUCCESS} {previous.group(1)}\n"
            text += (
                f"# HELP {LAST_SUCCESS} When the last successful run (exit 0) ended.\n"
                f"# TYPE {LAST_SUCCESS} gauge\n"
                + (with_label(sample, "shard", shard) if shard is not None else sample)
            )
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise MetricsError(f"--metrics-file {path}: {exc.strerror or exc}") from exc


def push(
    url: str,
    registry: CollectorRegistry,
    *,
    timeout: float,
    instance: str | None = None,
    shard: str | None = None,
) -> None:
    """Add the run's metrics to a Pushgateway's group `job=reconcile, instance=...` (and
    `shard=INDEX/COUNT` for a shard: each shard's gauges are its own, not overwritten by the
    others'), within `timeout` seconds in all (however slowly the gateway answers). A user and
    password in the URL are sent as basic auth, and never shown."""
    gateway, user, password = _without_userinfo(url)
    if password:
        remember_credential(password)
    grouping = {"instance": instance or os.environ.get("POD_NAMESPACE") or socket.gethostname()}
    if shard is not None:
        grouping["shard"] = shard
    if timeout <= 0:
        raise MetricsError(f"--metrics-pushgateway {gateway}: no time left in the run's budget")

    def handler(
        url: str, method: str, timeout: float | None, headers: list[tuple[str, str]], data: bytes
    ) -> Callable[[], None]:
        if user or password:
            return basic_auth_handler(url, method, timeout, headers, data, user, password)
        return default_handler(url, method, timeout, headers, data)

    failure: list[BaseException] = []

    def send() -> None:
        try:
            pushadd_to_gateway(
                gateway,
                job=JOB,
                registry=registry,
                grouping_key=grouping,
                timeout=timeout,
                handler=handler,
            )
        except Exception as exc:  # reported by the caller's thread
            failure.append(exc)

    # urllib's timeout bounds each socket read: a thread bounds the whole push (a gateway that
    # trickles its answer is left behind; the process ends right after)
    sender = threading.Thread(target=send, name="pushgateway", daemon=True)
    sender.start()
    sender.join(timeout)
    if sender.is_alive():
        raise MetricsError(f"--metrics-pushgateway {gateway}: no answer within {timeout:.1f}s")
    if failure:
        raise MetricsError(f"--metrics-pushgateway {gateway}: {scrub(str(failure[0]))}")


_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{)?", re.M)


def with_label(text: str, name: str, value: str) -> str:
    """Exposition text with `name="value"` added to every sample (comments untouched)."""
    escaped = value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')

    def add(match: re.Match[str]) -> str:
        label = f'{name}="{escaped}"'
        if match.group(2) is None:
            return f"{match.group(1)}{{{label}}}"
        sep = "" if text.startswith("}", match.end()) else ","
        return f"{match.group(1)}{{{label}{sep}"

    return _SAMPLE.sub(add, text)


def _without_userinfo(url: str) -> tuple[str, str, str]:
    """(the URL without user and password, the user, the password); a gateway named without
    a scheme is read as http:// and, without a user, left as it was given."""
    full = url if "://" in url else f"http://{url}"
    bare, user, password = split_userinfo(full)
    return (url, "", "") if bare == full else (bare, user, password)
