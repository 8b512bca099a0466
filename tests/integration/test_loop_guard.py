"""The loop guard, on both backends: an update the server accepts without changing anything is
not a change, and an object that needs the same change pass after pass is reported as not
converging, left alone for the rest of the run, and fails the run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reconcile.cluster.errors import NotFound
from reconcile.cluster.types import ResourceInfo
from reconcile.engine.changes import HIDDEN, FieldChange, field_changes
from reconcile.report.json_report import report_dict
from reconcile.results import Divergence, NotConverging, RunResult
from tests.support.backends import Backend
from tests.support.controllers import composite, run, webhook, write_controllers
from tests.support.hookserver import serve


def parent(kind: ResourceInfo, name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": {"parent": name}}},
    }


def test_an_update_the_server_ignores_is_reported_and_not_repeated(
    backend: Backend, namespace: str, tmp_path: Path
) -> None:
    holders = backend.apply_crd("Holder", scope="Cluster")
    owner = parent(holders, f"{namespace}-h", namespace)
    del owner["metadata"]["namespace"]
    backend.admin.create(holders, owner)
    name = f"{namespace}-held"
    # The hook's Namespace lists its own finalizer only. The server adds `kubernetes` when it
    # creates it, and keeps spec.finalizers as they are on every update (only the /finalize
    # subresource changes them): the update that would take `kubernetes` out is accepted and
    # changes nothing.
    child = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": {"parent": owner["metadata"]["name"]}},
        "spec": {"finalizers": ["example.com/hold"]},
    }

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        return {"status": {}, "children": [child]}

    with serve(sync) as server:
        controller = composite(
            "holders", holders, [("v1", "namespaces", "InPlace")], {"sync": webhook(server.url)}
        )
        mark = backend.mark()
        result = run(backend, write_controllers(tmp_path, controller))
    assert [n.how for n in result.not_converging] == [Divergence.IGNORED]
    (error,) = [e for e in result.errors if "does not converge" in e]
    assert error.startswith(f"Namespace {name} does not converge: the API server"), error
    assert "spec.finalizers" in error, error
    assert len(result.passes) == 2  # the ignored update did not start a third pass
    assert not result.converged
    mutations = backend.mutations_since(mark)
    # the child's create (and the Event saying so), its one ignored update, the parent's status
    assert (mutations["create"], mutations["update"]) == (2, 2), mutations


def test_an_object_another_writer_sets_back_is_left_alone(
    backend: Backend, namespace: str, tmp_path: Path
) -> None:
    pairs = backend.apply_crd("Pair")
    configmaps = backend.admin.discover("v1", "configmaps")
    for name in ("a-first", "b-second"):
        backend.admin.create(pairs, parent(pairs, name, namespace))
    wanted: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "shared", "labels": {"parent": "a-first"}},
    }
    wanted["data"] = {"owner": "hook"}

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        if request["parent"]["metadata"]["name"] == "a-first":
            return {"status": {}, "children": [wanted]}
        # the other writer: whenever it runs, the shared map is set back to its value
        try:
            current = backend.admin.get(configmaps, "shared", namespace=namespace)
        except NotFound:
            return {"status": {}, "children": []}
        if current.get("data", {}).get("owner") != "someone-else":
            current["data"] = {"owner": "someone-else"}
            backend.admin.update(configmaps, current)
        return {"status": {}, "children": []}

    with serve(sync) as server:
        controller = composite(
            "pairs", pairs, [("v1", "configmaps", "InPlace")], {"sync": webhook(server.url)}
        )
        mark = backend.mark()
        result = run(backend, write_controllers(tmp_path, controller), workers=1)
    assert [n.how for n in result.not_converging] == [Divergence.REVERTED]
    (error,) = [e for e in result.errors if "does not converge" in e]
    assert 'data.owner: the cluster keeps `"someone-else"` where the hook returns `"hook"`' in error
    assert "Left alone for the rest of the run" in error
    # created once, set back once, then left alone: the run ended instead of fighting on
    # (the other updates are the two parents' status; the other creates, their Events)
    mutations = backend.mutations_since(mark)
    assert (mutations["create"], mutations["update"]) == (3, 3)
    assert len(result.passes) == 3
    held = [a for p in result.passes[-1].parents() for a in p.actions if not a.applied]
    assert [a.error for a in held] == [
        f"left alone: ConfigMap {namespace}/shared does not converge (pass 3)"
    ]


def secret(value: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "data": {"k": value}}


def test_the_json_report_lists_the_fields_and_hides_secret_values() -> None:
    stuck = NotConverging(
        "Secret ns/creds",
        Divergence.IGNORED,
        tuple(field_changes(secret("c2VjcmV0"), secret("b3RoZXI="))),
        2,
    )
    report = report_dict(RunResult(dry_run=False, not_converging=[stuck]))
    assert report["notConverging"] == [
        {
            "object": "Secret ns/creds",
            "how": "ignored",
            "pass": 2,
            "fields": [{"path": "data.k", "hookReturns": HIDDEN, "clusterKeeps": HIDDEN}],
        }
    ]
    assert "c2VjcmV0" not in json.dumps(report)


def counter(gauges: ResourceInfo, url: str, *, attachments: bool = False) -> dict[str, Any]:
    """A DecoratorController over `gauges` (ConfigMaps as its attachments, with
    `attachments`)."""
    spec: dict[str, Any] = {
        "resources": [{"apiVersion": gauges.api_version, "resource": gauges.resource}],
        "hooks": {"sync": webhook(url)},
    }
    if attachments:
        spec["attachments"] = [{"apiVersion": "v1", "resource": "configmaps"}]
    return {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "DecoratorController",
        "metadata": {"name": "counter"},
        "spec": spec,
    }


def test_a_status_that_moves_between_passes_is_written_each_time(
    backend: Backend, namespace: str, tmp_path: Path
) -> None:
    """A decorator whose target has no status subresource writes its status with the target:
    0 in pass 1 and 1 in pass 2 (the hook counts what pass 1 made) is a change that moves,
    not the same change needed again."""
    gauges = backend.apply_crd("Gauge", status=False)
    configmaps = backend.admin.discover("v1", "configmaps")
    backend.admin.create(gauges, parent(gauges, "g", namespace))

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        made = len(request["attachments"].get("ConfigMap.v1", {}))
        attachment = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "made"}}
        return {"status": {"replicas": made}, "attachments": [attachment]}

    with serve(sync) as server:
        controller = counter(gauges, server.url, attachments=True)
        path = write_controllers(tmp_path, controller)
        result = run(backend, path)
        assert result.errors == [], result.errors
        assert result.not_converging == []
        assert result.converged
        assert backend.admin.get(gauges, "g", namespace=namespace)["status"] == {"replicas": 1}
        backend.admin.get(configmaps, "made", namespace=namespace)
        writes = [a.action for p in result.passes for q in p.parents() for a in q.actions]
        assert [a.reason for a in writes if a.resource == gauges] == ["status", "status"]
        mark = backend.mark()
        again = run(backend, path)
    assert again.errors == [] and again.converged
    assert backend.mutations_since(mark) == {}


def test_a_status_set_back_between_passes_is_named_and_labelled_as_status(
    backend: Backend, namespace: str, tmp_path: Path
) -> None:
    """The same status change (5 to 1) needed again: the guard names the field and the held
    write says it writes the status."""
    gauges = backend.apply_crd("Gauge", status=False)
    for name in ("a-first", "b-second"):
        backend.admin.create(gauges, {**parent(gauges, name, namespace), "status": {"replicas": 5}})

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        if request["object"]["metadata"]["name"] == "b-second":
            # the other writer: sets a-first's status back to 5
            current = backend.admin.get(gauges, "a-first", namespace=namespace)
            if current["status"] != {"replicas": 5}:
                backend.admin.update(gauges, {**current, "status": {"replicas": 5}})
            return {}
        return {"status": {"replicas": 1}}

    with serve(sync) as server:
        path = write_controllers(tmp_path, counter(gauges, server.url))
        result = run(backend, path, workers=1)
    (stuck,) = result.not_converging
    assert stuck.how is Divergence.REVERTED
    assert stuck.changes == (FieldChange("status.replicas", 1, 5),)
    (error,) = [e for e in result.errors if "does not converge" in e]
    assert error.startswith(f"Gauge {namespace}/a-first does not converge: pass 2 needed")
    assert "(status.replicas: the cluster keeps `5` where the hook returns `1`)" in error
    held = [a for p in result.passes[-1].parents() for a in p.actions if a.held]
    assert [(a.action.reason, a.error) for a in held] == [
        ("status", f"left alone: Gauge {namespace}/a-first does not converge (pass 2)")
    ]
