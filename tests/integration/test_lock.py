"""`--lock`, on both backends: two overlapping runs never both write; the second one exits 0
saying who holds the lock until when; an expired lease is taken over; a dry run needs no lock."""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from reconcile.cluster.types import ResourceInfo
from reconcile.job.app import ExitCode, exit_code
from tests.support.backends import Backend
from tests.support.controllers import composite, run, webhook, write_controllers
from tests.support.hookserver import serve


def lease_name() -> str:
    return f"default/reconcile-{uuid.uuid4().hex[:8]}"


def one_parent(backend: Backend, namespace: str) -> ResourceInfo:
    kind = backend.apply_crd("Locked")
    backend.admin.create(
        kind,
        {
            "apiVersion": kind.api_version,
            "kind": "Locked",
            "metadata": {"name": "p", "namespace": namespace},
            "spec": {"selector": {"matchLabels": {"locked": "p"}}},
        },
    )
    return kind


def child(request: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "locked-child", "labels": {"locked": "p"}},
        "data": {"run": "x"},
    }


def test_an_overlapping_run_is_skipped_and_writes_nothing(
    backend: Backend, namespace: str, tmp_path: Path
) -> None:
    kind = one_parent(backend, namespace)
    where = lease_name()
    inside_hook, let_go = threading.Event(), threading.Event()

    def slow_sync(request: dict[str, Any]) -> dict[str, Any]:
        inside_hook.set()
        let_go.wait(20)
        return {"status": {}, "children": [child(request)]}

    with serve(slow_sync) as server:
        controller = composite(
            "locked", kind, [("v1", "configmaps", "InPlace")], {"sync": webhook(server.url, "30s")}
        )
        path = write_controllers(tmp_path, controller)
        first: dict[str, Any] = {}
        holder = threading.Thread(
            target=lambda: first.update(
                result=run(backend, path, lock=where, lock_holder="first-run")
            )
        )
        holder.start()
        assert inside_hook.wait(20), "the first run reached its hook"
        mark = backend.mark()
        second = run(backend, path, lock=where, lock_holder="second-run")
        sent_by_second = backend.mutations_since(mark)
        let_go.set()
        holder.join(30)
    assert second.skipped is not None
    assert second.skipped.startswith(f"locked by first-run (Lease {where}) until 20")
    assert sent_by_second == {}
    assert exit_code(second) is ExitCode.OK and second.errors == []
    assert first["result"].errors == [] and first["result"].skipped is None
    leases = backend.admin.discover("coordination.k8s.io/v1", "leases")
    namespace_of_lease, name = where.split("/")
    released = backend.admin.get(leases, name, namespace=namespace_of_lease)
    assert "holderIdentity" not in released["spec"]  # given back at the end
    with serve(lambda request: {"status": {}, "children": [child(request)]}) as server:
        controller["spec"]["hooks"]["sync"] = webhook(server.url)
        path = write_controllers(tmp_path, controller)
        third = run(backend, path, lock=where, lock_holder="third-run")
    assert third.skipped is None and third.errors == []


def test_an_expired_lease_is_taken_over_and_a_dry_run_needs_none(
    backend: Backend, namespace: str, tmp_path: Path
) -> None:
    kind = one_parent(backend, namespace)
    where = lease_name()
    lease_namespace, name = where.split("/")
    leases = backend.admin.discover("coordination.k8s.io/v1", "leases")
    long_ago = (datetime.now(UTC) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    backend.admin.create(
        leases,
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": name, "namespace": lease_namespace},
            "spec": {
                "holderIdentity": "crashed-run",
                "leaseDurationSeconds": 60,
                "acquireTime": long_ago,
                "renewTime": long_ago,
                "leaseTransitions": 3,
            },
        },
    )
    seen: list[str] = []

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        lease = backend.admin.get(leases, name, namespace=lease_namespace)
        seen.append(str(lease["spec"].get("holderIdentity")))
        return {"status": {}, "children": [child(request)]}

    with serve(sync) as server:
        controller = composite(
            "locked", kind, [("v1", "configmaps", "InPlace")], {"sync": webhook(server.url)}
        )
        path = write_controllers(tmp_path, controller)
        taken = run(backend, path, lock=where, lock_holder="new-run")
        assert taken.skipped is None and taken.errors == [], taken.errors
        assert set(seen) == {"new-run"}  # held while the run wrote
        after = backend.admin.get(leases, name, namespace=lease_namespace)
        assert after["spec"]["leaseTransitions"] == 4
        # a live lease of another run does not stop a dry run, which writes nothing
        after["spec"].update(
            holderIdentity="busy-run",
            renewTime=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            leaseDurationSeconds=600,
        )
        backend.admin.update(leases, after)
        dry = run(backend, path, lock=where, lock_holder="dry", dry_run=True)
    assert dry.skipped is None and dry.errors == []


def test_the_longest_budget_fits_the_leases_int32_duration(
    backend: Backend, namespace: str, tmp_path: Path
) -> None:
    """`--max-duration 8760h` (the longest the CLI accepts) holds a Lease whose
    leaseDurationSeconds still fits the API's int32, on both backends."""
    kind = one_parent(backend, namespace)
    where = lease_name()
    leases = backend.admin.discover("coordination.k8s.io/v1", "leases")
    held: list[dict[str, Any]] = []

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        held.append(backend.admin.get(leases, where.split("/")[1], namespace="default"))
        return {"status": {}, "children": [child(request)]}

    with serve(sync) as server:
        controller = composite(
            "locked", kind, [("v1", "configmaps", "InPlace")], {"sync": webhook(server.url, "30s")}
        )
        path = write_controllers(tmp_path, controller)
        result = run(backend, path, lock=where, lock_holder="long-run", max_duration=8760 * 3600.0)
    assert result.errors == [] and exit_code(result) is ExitCode.OK
    assert held and held[0]["spec"]["leaseDurationSeconds"] == 8760 * 3600 + 30
