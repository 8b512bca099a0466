"""Rolling updates end to end with the StatefulSet-like example, on both backends: the test
plays the kubelet (Pods become Ready), a template change rolls across 3 replicas one Pod at a
time, progress lives in ControllerRevisions between runs, scaling works during a rollout, and
the finalize hook scales to zero."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from reconcile.cluster import AlreadyExists, NotFound, list_all
from reconcile.crds import CRD_DIR
from reconcile.objects.meta import metadata
from tests.support.backends import Backend
from tests.support.controllers import run
from tests.support.examples import ExampleLoader, controller_file
from tests.support.kubelet import Kubelet, ready
from tests.support.poll import eventually


def revisions(backend: Backend, namespace: str) -> list[dict[str, object]]:
    res = backend.admin.discover("metacontroller.k8s.io/v1alpha1", "controllerrevisions")
    return list_all(backend.admin, res, namespace=namespace).items


def updated_condition(parent: dict[str, object]) -> dict[str, str]:
    status = parent.get("status") or {}
    assert isinstance(status, dict)
    return next(c for c in status.get("conditions", []) if c["type"] == "Updated")


@pytest.fixture(params=["command", "webhook"])
def controller(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    with controller_file("statefulset-like", str(request.param), tmp_path) as path:
        yield path


def test_a_template_change_rolls_one_pod_at_a_time(
    backend: Backend, example: ExampleLoader, controller: Path
) -> None:
    crds = backend.admin.discover("apiextensions.k8s.io/v1", "customresourcedefinitions")

    with contextlib.suppress(AlreadyExists):
        backend.admin.create(
            crds, yaml.safe_load((CRD_DIR / "controllerrevisions.yaml").read_text())
        )
    eventually(
        lambda: backend.cluster.discover("metacontroller.k8s.io/v1alpha1", "controllerrevisions")
    )
    loaded = example("statefulset-like", "crd.yaml", "catset.yaml")
    ns = loaded.name("cats")
    catsets = backend.admin.discover("example.com/v1", "catsets")
    pvcs = backend.admin.discover("v1", "persistentvolumeclaims")

    with Kubelet(backend.admin, ns, expected=3) as kubelet:
        result = run(backend, controller, max_duration=30)
        assert result.errors == [] and result.converged
        eventually(lambda: len([1 for _ in kubelet.images()]) == 3, what="3 pods")
        assert set(kubelet.images().values()) == {"nginx:1.25"}
        assert len(revisions(backend, ns)) == 1
        claims = {
            metadata(c)["name"]: metadata(c)["uid"]
            for c in list_all(backend.admin, pvcs, namespace=ns).items
        }
        assert sorted(claims) == ["data-web-0", "data-web-1", "data-web-2"]
        # Everything Ready before the change, so that the rollout starts from a healthy set.
        pods = backend.admin.discover("v1", "pods")
        eventually(
            lambda: all(ready(p) for p in list_all(backend.admin, pods, namespace=ns).items),
            what="the Pods to be Ready",
        )
        kubelet.max_unavailable = 0

        parent = backend.admin.get(catsets, "web", namespace=ns)
        parent["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.27"
        backend.admin.update(catsets, parent)
        result = run(backend, controller, max_duration=60, poll_interval=0.1)
        assert result.errors == [], result.errors
        assert set(kubelet.images().values()) == {"nginx:1.27"}
        assert kubelet.max_unavailable <= 1  # never two Pods down at once
    after = backend.admin.get(catsets, "web", namespace=ns)
    condition = updated_condition(after)
    assert (condition["status"], condition["reason"]) == ("True", "OnLatestRevision")
    eventually(lambda: len(revisions(backend, ns)) == 1, what="the old revision to go")
    # Claims are OnDelete: untouched by the rollout.
    assert {
        metadata(c)["name"]: metadata(c)["uid"]
        for c in list_all(backend.admin, pvcs, namespace=ns).items
    } == claims

    # Deleting the CatSet: the finalize hook scales down one Pod at a time, then lets it go.
    backend.admin.delete(catsets, "web", namespace=ns)
    result = run(backend, controller, max_duration=60, poll_interval=0.1)
    assert result.errors == []
    assert len(result.passes) >= 4  # three Pods, one per pass, then the finalizer's removal
    with_pods = backend.admin.discover("v1", "pods")
    assert list_all(backend.admin, with_pods, namespace=ns).items == []
    try:
        backend.admin.get(catsets, "web", namespace=ns)
        raise AssertionError("the CatSet is still there")
    except NotFound:
        pass
