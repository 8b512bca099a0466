"""Every example, with its command hooks and with its webhook, on both backends. Each ends with
a second run that must send no writes at all (counted by the API server's audit log on the live
backend)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest

from reconcile.cluster.errors import Conflict, NotFound
from reconcile.cluster.types import ResourceInfo
from reconcile.engine.ownership import owner_reference
from reconcile.objects.meta import labels_of, metadata
from tests.support.backends import Backend
from tests.support.controllers import run
from tests.support.examples import (
    ExampleLoader,
    controller_file,
)
from tests.support.poll import eventually


@pytest.fixture(params=["command", "webhook"])
def variant(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def assert_second_run_sends_no_writes(backend: Backend, controller: Path) -> None:
    mark = backend.mark()
    result = run(backend, controller)
    assert result.errors == [] and result.converged
    assert len(result.passes) == 1
    assert backend.mutations_since(mark) == {}


def test_hello_world(
    backend: Backend, example: ExampleLoader, variant: str, tmp_path: Path
) -> None:
    loaded = example("hello-world", "crd.yaml", "hello.yaml")
    ns = loaded.name("hello")
    hellos = backend.admin.discover("example.com/v1", "helloworlds")
    pods = backend.admin.discover("v1", "pods")
    with controller_file("hello-world", variant, tmp_path) as controller:
        result = run(backend, controller)
        assert result.errors == [] and result.converged
        parent = backend.admin.get(hellos, "your-name", namespace=ns)
        pod = backend.admin.get(pods, "your-name", namespace=ns)
        assert pod["spec"]["containers"][0]["command"] == ["echo", "Hello, Your Name!"]
        assert labels_of(pod) == {"controller-uid": metadata(parent)["uid"]}
        assert parent["status"] == {"pods": 1, "observedGeneration": 1}
        assert_second_run_sends_no_writes(backend, controller)

        # A new greeting: Recreate deletes the Pod and creates it again within the run.
        parent["spec"]["who"] = "My Name"
        backend.admin.update(hellos, parent)
        result = run(backend, controller)
        assert result.errors == [] and result.converged
        recreated = backend.admin.get(pods, "your-name", namespace=ns)
        assert recreated["spec"]["containers"][0]["command"] == ["echo", "Hello, My Name!"]
        assert metadata(recreated)["uid"] != metadata(pod)["uid"]
        assert_second_run_sends_no_writes(backend, controller)


def test_indexed_job(
    backend: Backend, example: ExampleLoader, variant: str, tmp_path: Path
) -> None:
    loaded = example("indexed-job", "crd.yaml", "job.yaml")
    ns = loaded.name("batch-demo")
    jobs = backend.admin.discover("example.com/v1", "indexedjobs")
    pods = backend.admin.discover("v1", "pods")
    with controller_file("indexed-job", variant, tmp_path) as controller:
        assert run(backend, controller).errors == []
        job = backend.admin.get(jobs, "print-index", namespace=ns)
        for index in range(3):
            pod = backend.admin.get(pods, f"print-index-{index}", namespace=ns)
            env = pod["spec"]["containers"][0]["env"]
            assert {"name": "JOB_INDEX", "value": str(index)} in env
            assert labels_of(pod)["job-index"] == str(index)
            assert labels_of(pod)["controller-uid"] == metadata(job)["uid"]
            # Play the kubelet: the Pod ran to completion.
            pod["status"] = {"phase": "Succeeded"}
            backend.admin.update_status(pods, pod)
        result = run(backend, controller)
        assert result.errors == [] and result.converged
        status = backend.admin.get(jobs, "print-index", namespace=ns)["status"]
        assert status == {
            "active": 0,
            "succeeded": 3,
            "failed": 0,
            "complete": True,
            "observedGeneration": 1,
        }
        assert_second_run_sends_no_writes(backend, controller)


def test_configmap_propagation(
    backend: Backend, example: ExampleLoader, variant: str, tmp_path: Path
) -> None:
    loaded = example("configmap-propagation", "crd.yaml", "propagation.yaml")
    props = backend.admin.discover("example.com/v1", "configmappropagations")
    cms = backend.admin.discover("v1", "configmaps")
    name = loaded.name("shared-settings")
    with controller_file("configmap-propagation", variant, tmp_path) as controller:
        result = run(backend, controller)
        assert result.errors == [] and result.converged
        for team in ("team-a", "team-b"):
            copy = backend.admin.get(cms, name, namespace=loaded.name(team))
            assert copy["data"] == {"log-level": "info", "region": "eu-west-1"}
        parent = backend.admin.get(props, name)
        assert parent["status"] == {
            "source": "found",
            "expectedCopies": 2,
            "actualCopies": 2,
            "observedGeneration": 1,
        }
        assert_second_run_sends_no_writes(backend, controller)

        # The source changes: the copies follow in place (same objects, new data).
        source = backend.admin.get(cms, name, namespace="default")
        before = backend.admin.get(cms, name, namespace=loaded.name("team-a"))
        source["data"]["log-level"] = "debug"
        backend.admin.update(cms, source)
        assert run(backend, controller).errors == []
        after = backend.admin.get(cms, name, namespace=loaded.name("team-a"))
        assert after["data"]["log-level"] == "debug"
        assert metadata(after)["uid"] == metadata(before)["uid"]
        assert_second_run_sends_no_writes(backend, controller)
        backend.admin.delete(cms, name, namespace="default")
        backend.admin.delete(props, name)


def test_bucket_quota(
    backend: Backend, example: ExampleLoader, variant: str, tmp_path: Path
) -> None:
    """A DecoratorController that writes its targets' status."""
    loaded = example("bucket-quota", "crd.yaml", "bucket.yaml")
    ns = loaded.name("storage")
    buckets = backend.admin.discover("example.com/v1", "buckets")
    with controller_file("bucket-quota", variant, tmp_path) as controller:
        result = run(backend, controller)
        assert result.errors == [] and result.converged, result.errors
        logs = backend.admin.get(buckets, "logs", namespace=ns)
        assert labels_of(logs)["quota.example.com/tier"] == "large"
        assert logs["status"] == {"quotaBytes": 150 * 2**30, "tier": "large"}
        scratch = backend.admin.get(buckets, "scratch", namespace=ns)
        assert "quota.example.com/tier" not in labels_of(scratch)
        assert not scratch.get("status")
        assert_second_run_sends_no_writes(backend, controller)


def statefulset_pods(backend: Backend, sts: dict[str, Any]) -> list[dict[str, Any]]:
    """The StatefulSet's Pods: made by the real StatefulSet controller on the live backend (the
    test control plane runs it), made here on the memory backend, as that controller would."""
    pods = backend.admin.discover("v1", "pods")
    namespace, name = metadata(sts)["namespace"], metadata(sts)["name"]
    replicas = int(sts["spec"]["replicas"])
    if backend.name == "memory":
        template = sts["spec"]["template"]
        for ordinal in range(replicas):
            backend.admin.create(
                pods,
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"{name}-{ordinal}",
                        "namespace": namespace,
                        "labels": template["metadata"]["labels"],
                        "annotations": template["metadata"]["annotations"],
                        "ownerReferences": [owner_reference(sts)],
                    },
                    "spec": template["spec"],
                },
            )

    def all_there() -> list[dict[str, Any]]:
        found = [
            p
            for p in backend.admin.list(pods, namespace=namespace).items
            if metadata(p)["name"].startswith(f"{name}-")
        ]
        assert len(found) == replicas, f"{len(found)} of {replicas} pods"
        return found

    return eventually(all_there, what="the StatefulSet's pods", timeout=60)


def test_service_per_pod(
    backend: Backend, example: ExampleLoader, variant: str, tmp_path: Path
) -> None:
    """Two DecoratorControllers on real StatefulSet Pods: each Pod labelled with its name, a
    Service per Pod, and the Services removed by the finalize hook when the StatefulSet opts
    out."""
    loaded = example("service-per-pod", "statefulset.yaml")
    ns = loaded.name("service-per-pod")
    statefulsets = backend.admin.discover("apps/v1", "statefulsets")
    services = backend.admin.discover("v1", "services")
    pods = backend.admin.discover("v1", "pods")
    sts = backend.admin.get(statefulsets, "nginx", namespace=ns)
    statefulset_pods(backend, sts)
    with controller_file("service-per-pod", variant, tmp_path) as controller:
        result = run(backend, controller)
        assert result.errors == [] and result.converged, result.errors
        for ordinal in range(3):
            pod = backend.admin.get(pods, f"nginx-{ordinal}", namespace=ns)
            assert labels_of(pod)["pod-name"] == f"nginx-{ordinal}"
            service = backend.admin.get(services, f"nginx-{ordinal}", namespace=ns)
            assert service["spec"]["selector"] == {"pod-name": f"nginx-{ordinal}"}
            assert service["spec"]["ports"][0]["targetPort"] == 8080
        assert_second_run_sends_no_writes(backend, controller)
        # opting out: the finalize hook removes the Services, then the finalizer goes
        sts = backend.admin.get(statefulsets, "nginx", namespace=ns)
        del metadata(sts)["annotations"]["service-per-pod-ports"]
        backend.admin.update(statefulsets, sts)
        opted_out = run(backend, controller)
        assert opted_out.errors == [] and opted_out.converged, opted_out.errors
    remaining = [
        s
        for s in backend.admin.list(services, namespace=ns).items
        if metadata(s)["name"].startswith("nginx-")
    ]
    assert remaining == []
    after = backend.admin.get(statefulsets, "nginx", namespace=ns)
    assert not metadata(after).get("finalizers")


def _snapshots(backend: Backend, namespace: str) -> dict[str, dict[str, Any]]:
    snapshots = backend.admin.discover("snapshot.storage.k8s.io/v1", "volumesnapshots")
    found = backend.admin.list(snapshots, namespace=namespace).items
    return {metadata(s)["name"]: s for s in found}


def _delete_pvc(backend: Backend, namespace: str, name: str) -> None:
    """Delete a PVC and let it go, as the pvc-protection controller does for an unused one (on
    the real control plane that controller runs too, and may be first)."""
    pvcs = backend.admin.discover("v1", "persistentvolumeclaims")
    backend.admin.delete(pvcs, name, namespace=namespace)
    with contextlib.suppress(NotFound, Conflict):
        current = backend.admin.get(pvcs, name, namespace=namespace)
        metadata(current)["finalizers"] = []
        backend.admin.update(pvcs, current)

    def gone() -> bool:
        with contextlib.suppress(NotFound):
            backend.admin.get(pvcs, name, namespace=namespace)
            return False
        return True

    eventually(gone, what=f"PVC {name} to go")


def _pin_now(backend: Backend, schedules: ResourceInfo, ns: str, when: str) -> None:
    schedule = backend.admin.get(schedules, "my-app-snapshots", namespace=ns)
    metadata(schedule).setdefault("annotations", {})["snapshot.example.com/now"] = when
    backend.admin.update(schedules, schedule)


def test_snapshot_schedule(
    backend: Backend, example: ExampleLoader, variant: str, tmp_path: Path
) -> None:
    """The MapController design's SnapshotSchedule over real PVCs: snapshots on the interval,
    detached snapshots kept by the tombstone hook until their TTL, then deleted."""
    loaded = example("snapshot-schedule", "volumesnapshot-crd.yaml", "crd.yaml", "schedule.yaml")
    ns = loaded.name("my-app")
    schedules = backend.admin.discover("example.com/v1", "snapshotschedules")
    _pin_now(backend, schedules, ns, "2026-01-01T07:00:00Z")
    with controller_file("snapshot-schedule", variant, tmp_path) as controller:
        result = run(backend, controller)
        assert result.errors == [] and result.converged, result.errors
        snaps = _snapshots(backend, ns)
        assert sorted(snaps) == ["data-my-app-0-20260101-0600", "data-my-app-1-20260101-0600"]
        first = snaps["data-my-app-0-20260101-0600"]
        assert first["spec"] == {"source": {"persistentVolumeClaimName": "data-my-app-0"}}
        assert labels_of(first)["metacontroller.k8s.io/map-key"]
        assert metadata(first)["annotations"]["metacontroller.k8s.io/map-input"] == (
            f"PersistentVolumeClaim {ns}/data-my-app-0"
        )
        schedule = backend.admin.get(schedules, "my-app-snapshots", namespace=ns)
        assert metadata(first)["ownerReferences"] == [owner_reference(schedule)]
        assert schedule["status"] == {
            "persistentvolumeclaims": {"total": 2},
            "volumesnapshots": {"total": 2},
            "observedGeneration": 1,
        }
        assert_second_run_sends_no_writes(backend, controller)

        # the next interval: a second snapshot of each PVC
        _pin_now(backend, schedules, ns, "2026-01-01T13:30:00Z")
        assert run(backend, controller).errors == []
        assert len(_snapshots(backend, ns)) == 4

        # a PVC goes: the tombstone hook keeps its snapshots (inside their TTL)
        _delete_pvc(backend, ns, "data-my-app-1")
        result = run(backend, controller)
        assert result.errors == [] and result.converged, result.errors
        assert len(_snapshots(backend, ns)) == 4
        schedule = backend.admin.get(schedules, "my-app-snapshots", namespace=ns)
        assert schedule["status"]["persistentvolumeclaims"] == {"total": 1}
        assert schedule["status"]["volumesnapshots"] == {"total": 4}
        assert_second_run_sends_no_writes(backend, controller)

        # past the TTL: the detached snapshots go, the live PVC's old ones are replaced
        _pin_now(backend, schedules, ns, "2026-01-11T14:00:00Z")
        result = run(backend, controller)
        assert result.errors == [] and result.converged, result.errors
        assert sorted(_snapshots(backend, ns)) == ["data-my-app-0-20260111-1200"]
        assert_second_run_sends_no_writes(backend, controller)


def test_configmap_transform(
    backend: Backend, example: ExampleLoader, variant: str, tmp_path: Path
) -> None:
    """ConfigMaps in, ConfigMaps out, the outputs matching the parent's selector too: they are
    never inputs of their own parent."""
    loaded = example("configmap-transform", "crd.yaml", "transform.yaml")
    ns = loaded.name("shop")
    cms = backend.admin.discover("v1", "configmaps")
    transforms = backend.admin.discover("example.com/v1", "configmaptransforms")
    with controller_file("configmap-transform", variant, tmp_path) as controller:
        result = run(backend, controller)
        assert result.errors == [] and result.converged, result.errors
        copy = backend.admin.get(cms, "frontend-env", namespace=ns)
        assert copy["data"] == {"APP_FEATURE_CHECKOUT": "on", "APP_LOG_LEVEL": "info"}
        assert labels_of(copy)["config"] == "app"
        names = {metadata(c)["name"] for c in backend.admin.list(cms, namespace=ns).items}
        assert "frontend-env-env" not in names and "unrelated-env" not in names
        parent = backend.admin.get(transforms, "env-copies", namespace=ns)
        assert parent["status"]["configmaps"] == {"total": 2, "inputs": 2}
        assert_second_run_sends_no_writes(backend, controller)

        # an input changes: its copy follows (InPlace); a new input gets a copy
        source = backend.admin.get(cms, "frontend", namespace=ns)
        source["data"]["log-level"] = "debug"
        backend.admin.update(cms, source)
        backend.admin.create(
            cms,
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "search", "namespace": ns, "labels": {"config": "app"}},
                "data": {"shards": "4"},
            },
        )
        result = run(backend, controller)
        assert result.errors == [] and result.converged, result.errors
        updated = backend.admin.get(cms, "frontend-env", namespace=ns)
        assert updated["data"]["APP_LOG_LEVEL"] == "debug"
        assert metadata(updated)["uid"] == metadata(copy)["uid"]
        assert backend.admin.get(cms, "search-env", namespace=ns)["data"] == {"APP_SHARDS": "4"}

        # an input leaves the selection: no tombstone hook, so its copy is deleted
        source = backend.admin.get(cms, "payments", namespace=ns)
        metadata(source)["labels"] = {}
        backend.admin.update(cms, source)
        result = run(backend, controller)
        assert result.errors == [] and result.converged, result.errors
        names = {metadata(c)["name"] for c in backend.admin.list(cms, namespace=ns).items}
        assert "payments-env" not in names and "payments" in names
        parent = backend.admin.get(transforms, "env-copies", namespace=ns)
        assert parent["status"]["configmaps"] == {"total": 2, "inputs": 2}
        assert_second_run_sends_no_writes(backend, controller)
