"""Rolling updates end to end with the StatefulSet-like example, on both backends: the test
plays the kubelet (Pods become Ready), a template change rolls across 3 replicas one Pod at a
time, progress lives in ControllerRevisions between runs, scaling works during a rollout, and
the finalize hook scales to zero."""

from __future__ import annotations

import contextlib
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from reconcile.cluster import AlreadyExists, NotFound, list_all
from reconcile.cluster.types import ResourceInfo
from reconcile.config import ReconcileSettings
from reconcile.crds import CRD_DIR
from reconcile.objects.meta import metadata
from reconcile.runner.run import RunLoop
from tests.support.backends import Backend
from tests.support.controllers import run
from tests.support.controlplane import TESTED_USER, ControlPlane
from tests.support.crash import Crash, CrashingCluster
from tests.support.examples import EXAMPLES, ExampleLoader, controller_file, load_example
from tests.support.kubelet import Kubelet, ready
from tests.support.poll import eventually


def revisions(backend: Backend, namespace: str) -> list[dict[str, object]]:
    res = backend.admin.discover("metacontroller.k8s.io/v1alpha1", "controllerrevisions")
    return list_all(backend.admin, res, namespace=namespace).items


def updated_condition(parent: dict[str, object]) -> dict[str, str]:
    status = parent.get("status") or {}
    assert isinstance(status, dict)
    return next(c for c in status.get("conditions", []) if c["type"] == "Updated")


@pytest.fixture(params=["command", "webhook", "webhook-server-side"])
def controller(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, bool]]:
    """The example's controller with its hooks as commands or a webhook; and whether the run
    writes children with server-side apply."""
    kind, _, strategy = str(request.param).partition("-")
    with controller_file("statefulset-like", kind, tmp_path) as path:
        yield path, strategy == "server-side"


def test_a_template_change_rolls_one_pod_at_a_time(
    backend: Backend, example: ExampleLoader, controller: tuple[Path, bool]
) -> None:
    path, server_side = controller
    ns, catsets = _setup(backend, example)
    pvcs = backend.admin.discover("v1", "persistentvolumeclaims")

    with Kubelet(backend.admin, ns, expected=3) as kubelet:
        result = run(backend, path, server_side_apply=server_side, max_duration=30)
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
        result = run(
            backend, path, server_side_apply=server_side, max_duration=60, poll_interval=0.1
        )
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
    result = run(backend, path, server_side_apply=server_side, max_duration=60, poll_interval=0.1)
    assert result.errors == []
    assert len(result.passes) >= 4  # three Pods, one per pass, then the finalizer's removal
    with_pods = backend.admin.discover("v1", "pods")
    assert list_all(backend.admin, with_pods, namespace=ns).items == []
    try:
        backend.admin.get(catsets, "web", namespace=ns)
        raise AssertionError("the CatSet is still there")
    except NotFound:
        pass


def _install_revision_crd(backend: Backend) -> None:
    crds = backend.admin.discover("apiextensions.k8s.io/v1", "customresourcedefinitions")
    with contextlib.suppress(AlreadyExists):  # installed by an earlier test
        backend.admin.create(
            crds, yaml.safe_load((CRD_DIR / "controllerrevisions.yaml").read_text())
        )
    eventually(
        lambda: backend.cluster.discover("metacontroller.k8s.io/v1alpha1", "controllerrevisions")
    )


def _setup(backend: Backend, example: ExampleLoader) -> tuple[str, ResourceInfo]:
    _install_revision_crd(backend)
    loaded = example("statefulset-like", "crd.yaml", "catset.yaml")
    return loaded.name("cats"), backend.admin.discover("example.com/v1", "catsets")


def _set_image(backend: Backend, catsets: ResourceInfo, ns: str, image: str) -> None:
    parent = backend.admin.get(catsets, "web", namespace=ns)
    parent["spec"]["template"]["spec"]["containers"][0]["image"] = image
    backend.admin.update(catsets, parent)


def _set_replicas(backend: Backend, catsets: ResourceInfo, ns: str, replicas: int) -> None:
    parent = backend.admin.get(catsets, "web", namespace=ns)
    parent["spec"]["replicas"] = replicas
    backend.admin.update(catsets, parent)


COMMAND = EXAMPLES / "statefulset-like" / "controller.yaml"


def _finalize(backend: Backend, catsets: ResourceInfo, ns: str) -> None:
    """Let the parent go (its finalize hook scales to zero) so the namespace can be cleaned."""
    backend.admin.delete(catsets, "web", namespace=ns)
    assert run(backend, COMMAND, max_duration=60, poll_interval=0.1).errors == []


def test_the_budget_ends_mid_rollout_and_the_next_run_resumes_with_scaling(
    backend: Backend, example: ExampleLoader
) -> None:
    ns, catsets = _setup(backend, example)
    with Kubelet(backend.admin, ns, expected=3) as kubelet:
        assert run(backend, COMMAND).converged
        pods = backend.admin.discover("v1", "pods")
        eventually(
            lambda: (
                all(ready(p) for p in list_all(backend.admin, pods, namespace=ns).items)
                and len(kubelet.images()) == 3
            ),
            what="three Ready Pods",
        )
        # The kubelet stops making Pods Ready: the rollout must stop after one Pod.
        kubelet.auto_ready = False
        _set_image(backend, catsets, ns, "nginx:1.27")
        mark = backend.mark()
        dry = run(backend, COMMAND, dry_run=True)
        assert backend.mutations_since(mark) == {}  # dry-run writes no revision either
        pending = [a.action for p in dry.passes[0].parents() for a in p.actions]
        assert [(a.kind.value, a.resource.kind) for a in pending][:2] == [
            ("create", "ControllerRevision"),
            ("update", "ControllerRevision"),
        ]
        result = run(backend, COMMAND, max_duration=5, poll_interval=0.1)
        assert result.errors == [] and not result.converged
        assert result.due_next_run and "waiting" in result.due_next_run[0]
        images = kubelet.images()
        assert sorted(images.values()) == ["nginx:1.25", "nginx:1.25", "nginx:1.27"]
        assert len(revisions(backend, ns)) == 2
        condition = updated_condition(backend.admin.get(catsets, "web", namespace=ns))
        assert (condition["status"], condition["reason"]) == ("False", "RolloutWaiting")
        assert "Ready" in condition["message"]
        # Someone deletes a Pod still on the old revision: it comes back at its own revision.
        backend.admin.delete(pods, "web-2", namespace=ns)
        run(backend, COMMAND, max_duration=5, poll_interval=0.1)
        assert kubelet.images()["web-2"] == "nginx:1.25"
        # Scale up during the rollout: the new Pod starts at the latest revision.
        _set_replicas(backend, catsets, ns, 4)
        run(backend, COMMAND, max_duration=5, poll_interval=0.1)
        assert kubelet.images()["web-3"] == "nginx:1.27"
        # Scale down during the rollout: the highest ordinals go, wherever they are.
        _set_replicas(backend, catsets, ns, 2)
        run(backend, COMMAND, max_duration=5, poll_interval=0.1)
        eventually(lambda: sorted(kubelet.images()) == ["web-0", "web-1"], what="two Pods")
        kubelet.expected = 2
        kubelet.auto_ready = True
        kubelet.max_unavailable = 0
        result = run(backend, COMMAND, max_duration=60, poll_interval=0.1)
        assert result.errors == [] and result.converged
        assert set(kubelet.images().values()) == {"nginx:1.27"}
        assert kubelet.max_unavailable <= 1
    pvcs = backend.admin.discover("v1", "persistentvolumeclaims")
    claims = sorted(metadata(c)["name"] for c in list_all(backend.admin, pvcs, namespace=ns).items)
    assert claims == [f"data-web-{i}" for i in range(4)]  # kept when scaling down
    _finalize(backend, catsets, ns)


def test_crashes_at_any_write_never_lose_progress_or_move_two_pods(
    backend: Backend, example: ExampleLoader
) -> None:
    """The process dies after a random number of writes, run after run (a SIGKILL between two
    requests); the parent changes again mid-way. Every run resumes from the revisions."""
    ns, catsets = _setup(backend, example)
    # A second CatSet in the same namespace: its Pods must come through untouched.
    other = backend.admin.get(catsets, "web", namespace=ns)
    other = {
        "apiVersion": other["apiVersion"],
        "kind": other["kind"],
        "metadata": {"name": "api", "namespace": ns},
        "spec": {
            **other["spec"],
            "selector": {"matchLabels": {"app": "api"}},
            "template": {**other["spec"]["template"], "metadata": {"labels": {"app": "api"}}},
        },
    }
    backend.admin.create(catsets, other)
    chance = random.Random(5)
    with Kubelet(backend.admin, ns, expected=6) as kubelet:
        assert run(backend, COMMAND).converged
        eventually(lambda: len(kubelet.images()) == 6, what="six Pods")
        pods = backend.admin.discover("v1", "pods")
        theirs = {
            metadata(p)["name"]: metadata(p)["uid"]
            for p in list_all(backend.admin, pods, namespace=ns).items
            if metadata(p)["name"].startswith("api-")
        }
        eventually(
            lambda: all(ready(p) for p in list_all(backend.admin, pods, namespace=ns).items),
            what="three Ready Pods",
        )
        kubelet.max_unavailable = 0
        _set_image(backend, catsets, ns, "nginx:1.27")
        crashes, changed = 0, False
        for _ in range(80):
            if crashes == 2 and not changed:
                _set_image(backend, catsets, ns, "nginx:1.29")  # a new change mid-rollout
                changed = True
            dying = CrashingCluster(backend.cluster, chance.randint(1, 3))
            try:
                RunLoop(
                    dying,
                    ReconcileSettings(
                        controller_paths=(str(COMMAND),),
                        controllers_from_cluster=False,
                        workers=1,
                        max_duration=30,
                        poll_interval=0.1,
                    ),
                ).run()
            except Crash:
                crashes += 1
                continue
            break
        else:
            raise AssertionError("the rollout never finished")
    assert changed and crashes >= 3
    assert kubelet.max_unavailable <= 1
    images = kubelet.images()
    assert {images[f"web-{i}"] for i in range(3)} == {"nginx:1.29"}
    assert {images[f"api-{i}"] for i in range(3)} == {"nginx:1.25"}
    after = {
        metadata(p)["name"]: metadata(p)["uid"]
        for p in list_all(backend.admin, pods, namespace=ns).items
        if metadata(p)["name"].startswith("api-")
    }
    assert after == theirs  # the other parent's Pods were never deleted or replaced
    assert len(revisions(backend, ns)) == 2  # one per parent
    backend.admin.delete(catsets, "api", namespace=ns)
    _finalize(backend, catsets, ns)


@pytest.mark.long
@pytest.mark.controlplane
def test_sigkill_at_random_moments_on_the_real_control_plane(
    live_backend: Backend, control_plane: ControlPlane, tmp_path: Path
) -> None:
    """The real command, killed with SIGKILL at random moments, run after run."""
    backend = live_backend
    loaded = load_example(backend, "statefulset-like", "crd.yaml", "catset.yaml")
    _install_revision_crd(backend)
    catsets = backend.admin.discover("example.com/v1", "catsets")
    ns = loaded.name("cats")
    args = [
        sys.executable,
        "-m",
        "reconcile",
        "--kubeconfig",
        str(control_plane.kubeconfig),
        "--context",
        TESTED_USER,
        "--no-cluster-controllers",
        "--controllers",
        str(COMMAND),
        "--max-duration",
        "30",
        "--poll-interval",
        "0.1",
        "--report-format",
        "none",
    ]
    chance = random.Random(11)
    try:
        with Kubelet(backend.admin, ns, expected=3) as kubelet:
            assert subprocess.run(args, capture_output=True, check=False).returncode == 0
            pods = backend.admin.discover("v1", "pods")
            eventually(
                lambda: (
                    len(kubelet.images()) == 3
                    and all(ready(p) for p in list_all(backend.admin, pods, namespace=ns).items)
                ),
                what="three Ready Pods",
            )
            kubelet.max_unavailable = 0
            _set_image(backend, catsets, ns, "nginx:1.27")
            for _ in range(8):
                process = subprocess.Popen(
                    args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                )
                time.sleep(chance.uniform(0.2, 1.5))
                process.send_signal(signal.SIGKILL)
                process.wait()
            final = subprocess.run(args, capture_output=True, text=True, check=False)
            assert final.returncode == 0, final.stderr
            assert set(kubelet.images().values()) == {"nginx:1.27"}
            assert kubelet.max_unavailable <= 1
        assert len(revisions(backend, ns)) == 1
        backend.admin.delete(catsets, "web", namespace=ns)
        finish = subprocess.run(args, capture_output=True, text=True, check=False)
        assert finish.returncode == 0, finish.stderr
    finally:
        loaded.cleanup()
