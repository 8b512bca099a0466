"""Normal Events for what a run did to a parent's children (on both backends), and the run's
Prometheus metrics, written for the textfile collector and pushed to a real Pushgateway."""

from __future__ import annotations

import json
import shutil
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from tests.support.backends import Backend
from tests.support.cli import reconcile
from tests.support.controllers import composite, run, webhook, write_controllers
from tests.support.examples import EXAMPLES
from tests.support.hookserver import serve
from tests.support.pushgateway import free_port

HELLO = str(EXAMPLES / "hello-world")


def events_of(backend: Backend, namespace: str, name: str) -> list[dict[str, Any]]:
    events = backend.admin.discover("v1", "events")
    return [
        e
        for e in backend.admin.list(events, namespace=namespace).items
        if e["involvedObject"]["name"] == name
    ]


def test_a_run_records_one_normal_event_per_kind_of_change(
    backend: Backend, namespace: str, tmp_path: Path
) -> None:
    kind = backend.apply_crd("Fleet")
    backend.admin.create(
        kind,
        {
            "apiVersion": kind.api_version,
            "kind": "Fleet",
            "metadata": {"name": "f", "namespace": namespace},
            "spec": {"selector": {"matchLabels": {"fleet": "f"}}},
        },
    )
    children = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"ship-{i}", "labels": {"fleet": "f"}},
            "data": {"n": str(i)},
        }
        for i in range(7)
    ]
    with serve(lambda request: {"status": {}, "children": children}) as server:
        controller = composite(
            "fleet", kind, [("v1", "configmaps", "InPlace")], {"sync": webhook(server.url)}
        )
        path = write_controllers(tmp_path, controller)
        assert run(backend, path).errors == []
        (created,) = events_of(backend, namespace, "f")
        assert (created["type"], created["reason"], created["count"]) == ("Normal", "Created", 7)
        assert created["message"].startswith(f"created 7 ConfigMap: ConfigMap {namespace}/ship-")
        assert created["message"].endswith(" and 2 more")
        assert created["source"] == {"component": "reconcile"}
        again = run(backend, path)  # converged: nothing done, nothing recorded
        assert again.converged
    assert len(events_of(backend, namespace, "f")) == 1


def test_the_same_event_in_later_runs_raises_its_count_instead_of_adding_one(
    backend: Backend, namespace: str, tmp_path: Path
) -> None:
    """As Kubernetes' event recorder aggregates: a parent failing in every run (a CronJob every
    5 minutes) keeps one SyncError Event whose count and lastTimestamp grow."""
    kind = backend.apply_crd("Fleet")
    for name in ("sinking", "floating"):
        backend.admin.create(
            kind,
            {
                "apiVersion": kind.api_version,
                "kind": "Fleet",
                "metadata": {"name": name, "namespace": namespace},
                "spec": {"selector": {"matchLabels": {"fleet": name}}},
            },
        )

    def sync(request: dict[str, Any]) -> dict[str, Any] | tuple[int, Any]:
        if request["parent"]["metadata"]["name"] == "sinking":
            return (500, {"message": "the hook's own bug"})
        return {"children": []}

    with serve(sync) as server:
        controller = composite(
            "fleet", kind, [("v1", "configmaps", "InPlace")], {"sync": webhook(server.url)}
        )
        path = write_controllers(tmp_path, controller)
        for _ in range(3):
            assert run(backend, path, max_duration=5.0).errors
    (failed,) = [e for e in events_of(backend, namespace, "sinking") if e["reason"] == "SyncError"]
    assert failed["type"] == "Warning" and failed["count"] >= 3
    assert failed["lastTimestamp"] >= failed["firstTimestamp"]
    assert events_of(backend, namespace, "floating") == []


def samples(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((dict(sample.labels), sample.value))
    return found


def test_the_metrics_file_has_the_run_and_its_hooks(tmp_path: Path) -> None:
    metrics = tmp_path / "reconcile.prom"
    done = reconcile("--local", HELLO, "--metrics-file", str(metrics), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    found = samples(metrics.read_text())
    assert found["reconcile_run_exit_code"] == [({}, 0.0)]
    assert found["reconcile_run_converged"] == [({}, 1.0)]
    assert ({"kind": "create", "state": "applied"}, 1.0) in found["reconcile_run_actions"]
    requests = {
        (labels["verb"], labels["code"]): n for labels, n in found["reconcile_api_requests"]
    }
    assert requests[("create", "201")] == 2.0  # the Pod, and the Event that says so
    (hooks,) = found["metacontroller_sync_requests_total"]
    assert hooks[0] == {
        "url": "python3 hooks.py sync",
        "controller_name": "hello-controller",
        "controller_type": "CompositeController",
        "code": "0",
        "method": "exec",
    }
    assert "metacontroller_sync_request_duration_histogram_seconds_bucket" in found
    (success,) = found["reconcile_last_success_timestamp_seconds"]
    # a failing run replaces the file but keeps the time of the last success
    failed = reconcile(
        "--local", HELLO, "--metrics-file", str(metrics), "--controller", "nope", cwd=tmp_path
    )
    assert failed.returncode == 1
    after = samples(metrics.read_text())
    assert after["reconcile_run_exit_code"] == [({}, 1.0)]
    assert after["reconcile_last_success_timestamp_seconds"] == [success]


def test_metrics_are_pushed_to_a_pushgateway(tmp_path: Path, pushgateway: str) -> None:
    done = reconcile("--local", HELLO, "--metrics-pushgateway", pushgateway, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    failed = reconcile(
        "--local", HELLO, "--metrics-pushgateway", pushgateway, "--controller", "x", cwd=tmp_path
    )
    assert failed.returncode == 1
    text = urllib.request.urlopen(f"{pushgateway}/metrics", timeout=5).read().decode()
    found = samples(text)
    ((labels, code),) = found["reconcile_run_exit_code"]
    assert labels["job"] == "reconcile" and code == 1.0  # the last run
    assert len(found["reconcile_last_success_timestamp_seconds"]) == 1  # the earlier success
    assert any(
        s[0]["controller_name"] == "hello-controller"
        for s in found["metacontroller_sync_requests_total"]
    )
    unreachable = reconcile(
        "--local", HELLO, "--metrics-pushgateway", f"http://127.0.0.1:{free_port()}", cwd=tmp_path
    )
    assert unreachable.returncode == 1
    assert "could not write the metrics: --metrics-pushgateway" in unreachable.stderr


def test_a_run_skipped_because_the_lease_is_held_is_not_a_success(tmp_path: Path) -> None:
    """A Lease held for ever (a crashed holder with a long duration) skips every run with exit
    0: the last-success time must stay where the last real run put it, so the alert fires."""
    inputs = tmp_path / "examples" / "hello"
    shutil.copytree(HELLO, inputs)
    metrics = tmp_path / "reconcile.prom"
    done = reconcile("--local", str(inputs), "--metrics-file", str(metrics), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (success,) = samples(metrics.read_text())["reconcile_last_success_timestamp_seconds"]
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "reconcile", "namespace": "default"},
        "spec": {
            "holderIdentity": "stuck-run",
            "leaseDurationSeconds": 86400,
            "acquireTime": now,
            "renewTime": now,
        },
    }
    (inputs / "lease.yaml").write_text(json.dumps(lease))
    for _ in range(2):
        time.sleep(0.05)
        skipped = reconcile(
            "--local",
            str(inputs),
            "--lock",
            "reconcile",
            "--metrics-file",
            str(metrics),
            cwd=tmp_path,
        )
        assert skipped.returncode == 0, skipped.stderr
        found = samples(metrics.read_text())
        assert found["reconcile_run_skipped"] == [({}, 1.0)]
        assert found["reconcile_last_success_timestamp_seconds"] == [success]
    taken = reconcile("--local", str(inputs), "--metrics-file", str(metrics), cwd=tmp_path)
    assert taken.returncode == 0, taken.stderr
    found = samples(metrics.read_text())
    assert found["reconcile_run_skipped"] == [({}, 0.0)]
    assert found["reconcile_last_success_timestamp_seconds"][0][1] > success[1]
