"""Metacontroller's Node.js examples, `bluegreen` and `catset` (vendored unchanged in
tests/data/metacontroller/examples), run with `reconcile` in place of Metacontroller, on both
backends. Their hook server is Metacontroller's `nodejs/server.js` with the example's `sync.js`,
both unchanged, run by `node` on a loopback port (tests/support/mc_nodejs.py).

test.sh polls (`until ...; do sleep 1; done`) while Metacontroller keeps syncing; `reconcile` is
one-shot, so each step of test.sh is here: change the objects as test.sh does, then run
`reconcile` again and again, with what the rest of a cluster does between runs (the kubelet
making Pods Ready, the ReplicaSet controller), until a run ends converged having written nothing
and nothing changed after it; then check what test.sh waits for. No kubelet runs in the test
control plane nor in the memory backend: the test plays it. The objects go in a namespace of the
test's own rather than in `default`, where test.sh puts them, so that no other test meets them
or their Pods."""

from __future__ import annotations

import contextlib
import copy
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile.cluster import AlreadyExists, NotFound, list_all
from reconcile.cluster.types import Obj, ResourceInfo
from reconcile.crds import CRD_DIR
from reconcile.engine.ownership import owner_reference
from reconcile.objects.meta import is_deleting
from reconcile.results import RunResult
from tests.support.backends import Backend
from tests.support.kubelet import ready
from tests.support.mc_crds import runner_for
from tests.support.mc_examples import Example, pointed_at, port_sources
from tests.support.mc_nodejs import node_hook_server
from tests.support.poll import eventually

GROUP = "ctl.enisoc.com/v1"
# a short poll: a run waits on nothing here but a Pod deleted at once
RUN_OPTIONS: dict[str, Any] = {"poll_interval": 0.05, "max_duration": 20.0}
MAX_RUNS = 8  # per step of test.sh; the longest (3 Pods, one after the other) takes 5


def _created_in(example: Example, file: str, namespace: str) -> None:
    """The file's objects (test.sh's `kubectl apply -f`), in `namespace`."""
    documents = [d for d in yaml.safe_load_all((example.directory / file).read_text()) if d]
    for document in documents:
        document["metadata"]["namespace"] = namespace
    example.create(*documents)


def _reconcile(
    example: Example, backend: Backend, tmp_path: Path, source: str, base_url: str
) -> contextlib.AbstractContextManager[Callable[[], RunResult]]:
    """What `run_example` does, set up once for the many runs of a test: the example's
    controllers, pointed at its hook server, read from a file or created in the cluster under
    Metacontroller's own CRDs. Calling what it yields runs `reconcile` once."""
    controllers = [pointed_at(c, base_url) for c in example.controllers()]
    assert {c["kind"] for c in controllers} == {"CompositeController"}
    return runner_for(backend, tmp_path, source, controllers, **RUN_OPTIONS)


def _runs_until_settled(
    run_once: Callable[[], RunResult], between: Callable[[], int], what: str
) -> None:
    """`reconcile` run, then `between` (the rest of the cluster; how many objects it
    changed), until a run writes nothing and nothing changes after it: the state test.sh's
    polling waits for while Metacontroller keeps syncing. Every run ends converged."""
    writes: list[dict[str, int]] = []
    for i in range(MAX_RUNS):
        result = run_once()
        assert result.errors == [] and result.converged, (what, i, result.errors)
        writes.append(dict(result.actions_by_kind()))
        changed = between()
        if not writes[-1] and not changed:
            return
    raise AssertionError(f"{what}: still not settled after {MAX_RUNS} runs; writes: {writes}")


def _kubelet(backend: Backend, namespace: str, *, ready_for: float = 0.0) -> int:
    """Plays the kubelet once: every Pod of the namespace not Ready yet becomes Running and
    Ready, Ready since `ready_for` seconds ago (a ReplicaSet's `minReadySeconds` counts from
    then). How many Pods it changed."""
    pods = backend.admin.discover("v1", "pods")
    since = (datetime.now(UTC) - timedelta(seconds=ready_for)).strftime("%Y-%m-%dT%H:%M:%SZ")
    changed = 0
    for pod in list_all(backend.admin, pods, namespace=namespace).items:
        if is_deleting(pod) or ready(pod):
            continue
        condition = {"type": "Ready", "status": "True", "lastTransitionTime": since}
        with contextlib.suppress(NotFound):  # deleted in between
            backend.admin.update_status(
                pods, {**pod, "status": {"phase": "Running", "conditions": [condition]}}
            )
            changed += 1
    return changed


# -- catset ---------------------------------------------------------------------------------

CONTROLLER_FINALIZER = "metacontroller.io/compositecontroller-catset-controller"
TEST_FINALIZER = "metacontroller.io/catset-test"  # test.sh's own


def _install_revision_crd(backend: Backend) -> None:
    """`reconcile` keeps the progress of rolling updates (CatSet's `revisionHistory`) in
    `controllerrevisions.metacontroller.k8s.io`, from its `manifests/crds/` (installed with
    Metacontroller too, under the same name)."""
    crds = backend.admin.discover("apiextensions.k8s.io/v1", "customresourcedefinitions")
    with contextlib.suppress(AlreadyExists):  # installed by an earlier test
        backend.admin.create(
            crds, yaml.safe_load((CRD_DIR / "controllerrevisions.yaml").read_text())
        )
    eventually(
        lambda: backend.cluster.discover("metacontroller.k8s.io/v1alpha1", "controllerrevisions"),
        what="controllerrevisions served",
    )


@pytest.mark.parametrize("source", port_sources())
def test_catset(
    backend: Backend,
    mc_example: Callable[[str], Example],
    namespace: str,
    tmp_path: Path,
    source: str,
) -> None:
    """A StatefulSet-like CatSet: a PVC per replica, Pods created one at a time, each once the
    lower ordinals are Running and Ready (the test plays the kubelet between runs); scaled up
    to 4 and down to 2; deleted while an extra finalizer of the test holds it, its finalize
    hook scales it to 0 and `reconcile` then removes its own finalizer, leaving only the
    test's (examples/catset/test.sh). The Pods are RollingRecreate under `revisionHistory`
    (the hook lists them highest ordinal first, the order a rollout follows), but test.sh
    changes no template, so nothing rolls."""
    ported = mc_example("catset")
    _install_revision_crd(backend)
    ported.install_crds()
    catsets = backend.admin.discover(GROUP, "catsets")
    pods = backend.admin.discover("v1", "pods")

    def catset() -> Obj:
        return backend.admin.get(catsets, "nginx-backend", namespace=namespace)

    def set_finalizers(finalizers: list[str]) -> None:
        current = catset()
        current["metadata"]["finalizers"] = finalizers
        backend.admin.update(catsets, current)

    def scale(replicas: int) -> None:
        """test.sh's `kubectl patch --type=merge -p '{"spec":{"replicas":N}}'`."""
        current = catset()
        current["spec"]["replicas"] = replicas
        backend.admin.update(catsets, current)

    def pod_names() -> list[str]:
        items = list_all(backend.admin, pods, namespace=namespace).items
        return sorted(p["metadata"]["name"] for p in items)

    with (
        node_hook_server(ported.directory) as url,
        _reconcile(ported, backend, tmp_path, source, url) as run_once,
    ):

        def settled(what: str) -> None:
            _runs_until_settled(run_once, lambda: _kubelet(backend, namespace), what)

        try:
            # Create an object; wait for 3 Pods to be Ready
            _created_in(ported, "my-catset.yaml", namespace)
            settled("3 replicas")
            assert catset()["status"]["readyReplicas"] == 3
            assert pod_names() == [f"nginx-backend-{i}" for i in range(3)]

            # Scale up to 4 replicas; wait for 4 Pods to be Ready
            scale(4)
            settled("scaled up to 4")
            assert catset()["status"]["readyReplicas"] == 4
            assert pod_names() == [f"nginx-backend-{i}" for i in range(4)]

            # Scale down to 2 replicas; wait for 2 Pods to be Ready
            scale(2)
            settled("scaled down to 2")
            assert catset()["status"]["readyReplicas"] == 2
            assert pod_names() == ["nginx-backend-0", "nginx-backend-1"]

            # Append our own finalizer so we can read the final state (test.sh's JSON patch
            # `add /metadata/finalizers/-` needs the list: the controller's finalizer is in it)
            finalizers = catset()["metadata"]["finalizers"]
            assert finalizers == [CONTROLLER_FINALIZER]
            set_finalizers([*finalizers, TEST_FINALIZER])

            # Delete CatSet; expect CatSet's finalizer to scale the CatSet to 0 replicas
            backend.admin.delete(catsets, "nginx-backend", namespace=namespace)
            settled("finalized")
            final = catset()
            assert final["status"]["replicas"] == 0
            assert pod_names() == []

            # Wait for our finalizer to be the only one left, then remove it
            assert final["metadata"]["finalizers"] == [TEST_FINALIZER]
            set_finalizers([])
            eventually(
                lambda: _gone(backend, catsets, "nginx-backend", namespace), what="CatSet gone"
            )
        finally:
            # test.sh's cleanup trap: no finalizer left on the CatSet, whatever happened
            with contextlib.suppress(NotFound):
                set_finalizers([])


def _gone(backend: Backend, resource: ResourceInfo, name: str, namespace: str) -> bool:
    try:
        backend.admin.get(resource, name, namespace=namespace)
    except NotFound:
        return True
    return False


# -- bluegreen ------------------------------------------------------------------------------

# my-bluegreen.yaml's, which its ReplicaSets get: a Pod counts as available once Ready for
# that long. The kubelet stand-in reports Pods Ready since a second longer, so that they count
# at once; a kubelet would take those 5 s (three times in test.sh).
READY_FOR = 5 + 1


def _controlled_pods(backend: Backend, owner: Obj, namespace: str) -> list[Obj]:
    pods = backend.admin.discover("v1", "pods")
    return [
        pod
        for pod in list_all(backend.admin, pods, namespace=namespace).items
        if not is_deleting(pod)
        and any(
            ref.get("controller") and ref.get("uid") == owner["metadata"]["uid"]
            for ref in pod["metadata"].get("ownerReferences") or []
        )
    ]


def _play_the_replicaset_controller(backend: Backend, namespace: str) -> None:
    """What kube-controller-manager's ReplicaSet controller does, for the memory backend
    (which runs none): each ReplicaSet gets `spec.replicas` Pods from its template, owned by
    it; then, the test having played the kubelet, a status counting them (Ready for
    `minReadySeconds`, so available too)."""
    replicasets = backend.admin.discover("apps/v1", "replicasets")
    pods = backend.admin.discover("v1", "pods")
    for replicaset in list_all(backend.admin, replicasets, namespace=namespace).items:
        name, wanted = replicaset["metadata"]["name"], replicaset["spec"]["replicas"]
        owned = _controlled_pods(backend, replicaset, namespace)
        for extra in owned[wanted:]:
            backend.admin.delete(pods, extra["metadata"]["name"], namespace=namespace)
        owner = owner_reference({"apiVersion": "apps/v1", "kind": "ReplicaSet", **replicaset})
        for _ in range(len(owned), wanted):
            template = copy.deepcopy(replicaset["spec"]["template"])
            meta = {
                **template["metadata"],
                "name": f"{name}-{uuid.uuid4().hex[:5]}",
                "namespace": namespace,
                "ownerReferences": [owner],
            }
            pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": template["spec"]}
            backend.admin.create(pods, pod)
    _kubelet(backend, namespace, ready_for=READY_FOR)
    for replicaset in list_all(backend.admin, replicasets, namespace=namespace).items:
        owned = _controlled_pods(backend, replicaset, namespace)
        available = sum(1 for p in owned if ready(p))
        status = {
            "replicas": len(owned),
            "fullyLabeledReplicas": len(owned),
            "readyReplicas": available,
            "availableReplicas": available,
            "observedGeneration": replicaset["metadata"]["generation"],
        }
        if replicaset.get("status") != status:
            backend.admin.update_status(replicasets, {**replicaset, "status": status})


def _replicasets_settled(backend: Backend, namespace: str) -> bool:
    """Every ReplicaSet's status is of its current spec and counts `spec.replicas` Pods, all
    Ready and available."""
    replicasets = backend.admin.discover("apps/v1", "replicasets")
    for replicaset in list_all(backend.admin, replicasets, namespace=namespace).items:
        status, wanted = replicaset.get("status") or {}, replicaset["spec"]["replicas"]
        if status.get("observedGeneration") != replicaset["metadata"]["generation"]:
            return False
        counts = [status.get(k, 0) for k in ("replicas", "readyReplicas", "availableReplicas")]
        if counts != [wanted] * 3:
            return False
    return True


def _between_runs(backend: Backend, namespace: str) -> int:
    """The ReplicaSet controller and the kubelet, until every ReplicaSet has its Pods, all
    Ready and available: on the real control plane kube-controller-manager's ReplicaSet
    controller (the test playing the kubelet), on the memory backend the test playing both.
    How many ReplicaSets changed (their status) after the run."""
    replicasets = backend.admin.discover("apps/v1", "replicasets")

    def versions() -> dict[str, str]:
        items = list_all(backend.admin, replicasets, namespace=namespace).items
        return {r["metadata"]["name"]: r["metadata"]["resourceVersion"] for r in items}

    before = versions()
    if backend.plane is None:
        _play_the_replicaset_controller(backend, namespace)
    else:

        def settled() -> bool:
            _kubelet(backend, namespace, ready_for=READY_FOR)
            return _replicasets_settled(backend, namespace)

        eventually(settled, what="the ReplicaSets' Pods Ready and counted", timeout=30)
    return sum(1 for name, version in versions().items() if before.get(name) != version)


@contextlib.contextmanager
def _replicaset_controller(backend: Backend) -> Iterator[None]:
    """kube-controller-manager's ReplicaSet controller on the real control plane while the
    test runs (the memory backend runs none: the test plays it)."""
    if backend.plane is None:
        yield
        return
    with backend.plane.more_controllers("replicaset"):
        yield


@pytest.mark.parametrize("source", port_sources())
def test_bluegreen(
    backend: Backend,
    mc_example: Callable[[str], Example],
    namespace: str,
    tmp_path: Path,
    source: str,
) -> None:
    """A BlueGreenDeployment: a ReplicaSet per color and a Service selecting the active one; a
    change of the Pod template scales the inactive ReplicaSet up with it, switches the Service
    over once all its Pods are available, then scales the other one to 0; twice, so the active
    color goes blue, green, blue (examples/bluegreen/test.sh). Between runs the ReplicaSet
    controller makes and counts the Pods, and the test plays the kubelet."""
    ported = mc_example("bluegreen")
    ported.install_crds()
    bgds = backend.admin.discover(GROUP, "bluegreendeployments")
    replicasets = backend.admin.discover("apps/v1", "replicasets")
    services = backend.admin.discover("v1", "services")

    def bgd() -> Obj:
        return backend.admin.get(bgds, "nginx", namespace=namespace)

    def rs_status(name: str) -> dict[str, Any]:
        replicaset = backend.admin.get(replicasets, name, namespace=namespace)
        status: dict[str, Any] = replicaset["status"]
        return status

    def active(color: str, inactive: str) -> None:
        """test.sh's five waits after each step (its `-eq "blue"` compares two strings as
        numbers, so it always holds: the color is compared here)."""
        assert rs_status(f"nginx-{color}")["readyReplicas"] == 3
        assert rs_status(f"nginx-{inactive}")["replicas"] == 0
        parent = bgd()
        assert parent["status"]["activeColor"] == color
        assert parent["status"]["active"]["availableReplicas"] == 3
        assert parent["status"]["observedGeneration"] == parent["metadata"]["generation"]
        # what the colors are for (not in test.sh): the Service selects the active Pods
        service = backend.admin.get(services, "nginx-frontend", namespace=namespace)
        assert service["spec"]["selector"]["color"] == color

    def new_label(key: str, value: str) -> None:
        """test.sh's `kubectl patch --type=merge` of the Pod template's labels."""
        current = bgd()
        current["spec"]["template"]["metadata"]["labels"][key] = value
        backend.admin.update(bgds, current)

    with (
        _replicaset_controller(backend),
        node_hook_server(ported.directory) as url,
        _reconcile(ported, backend, tmp_path, source, url) as run_once,
    ):

        def settled(what: str) -> None:
            _runs_until_settled(run_once, lambda: _between_runs(backend, namespace), what)

        # Create an object; wait for nginx-blue RS to be active
        _created_in(ported, "my-bluegreen.yaml", namespace)
        settled("created")
        active("blue", "green")

        # Trigger a rollout; wait for nginx-green RS to be active
        new_label("new", "label")
        settled("first rollout")
        active("green", "blue")

        # Trigger another rollout; wait for nginx-blue RS to be active
        new_label("new2", "label2")
        settled("second rollout")
        active("blue", "green")
