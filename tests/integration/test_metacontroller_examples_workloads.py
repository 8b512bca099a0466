"""Metacontroller's examples about workloads (tests/data/metacontroller/examples, vendored
unchanged) run with `reconcile` in place of Metacontroller: `service-per-pod` and
`service-per-pod-v2` (Jsonnet hooks served as the `metacontroller/jsonnetd` image serves them,
DecoratorControllers on StatefulSets and Pods), `daemonjob` (DaemonSets) and `indexedjob` (Pods),
the last two with their `sync.py` unchanged on a loopback port.

Each `test.sh` polls while Metacontroller runs on; `reconcile` is one-shot, so each of its steps
here is: change the objects as `test.sh` does, run `reconcile` (again, after what happens between
runs: a workload controller, or the test playing the kubelet, since no kubelet runs in the test
control plane nor in the memory backend), then check what `test.sh` waits for."""

from __future__ import annotations

import contextlib
import copy
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from reconcile.cluster import Conflict, NotFound, list_all
from reconcile.cluster.types import Obj, ResourceInfo
from reconcile.engine.ownership import owner_reference
from reconcile.objects.meta import metadata
from reconcile.results import RunResult
from tests.support.backends import Backend
from tests.support.kubelet import Kubelet, mark_ready, ready
from tests.support.mc_crds import runner_for
from tests.support.mc_examples import Example, hook_server, pointed_at, port_sources
from tests.support.mc_jsonnet import hooks_of, jsonnet_server
from tests.support.poll import eventually

DECORATOR_FINALIZER = "metacontroller.io/decoratorcontroller-service-per-pod"
TEST_FINALIZER = "metacontroller.io/service-per-pod-test"  # test.sh's own


def _changed(
    backend: Backend, resource: ResourceInfo, name: str, change: Callable[[Obj], object]
) -> Obj:
    """The object read, changed and written back by the test (as kubectl does), again on a
    conflict with a controller's own write in between."""
    for _ in range(20):
        obj = backend.admin.get(resource, name, namespace="default")
        change(obj)
        with contextlib.suppress(Conflict):
            return backend.admin.update(resource, obj)
    raise AssertionError(f"{name}: a conflict at every one of 20 updates")


@contextlib.contextmanager
def _runs(
    example: Example, backend: Backend, tmp_path: Path, source: str, base_url: str
) -> Iterator[Callable[[], RunResult]]:
    """The example's controllers, pointed at its hook server, set up once (from a file, or in
    the cluster under Metacontroller's CRDs): each call is one run of `reconcile`, which must
    end without errors and converged."""
    controllers = [pointed_at(c, base_url) for c in example.controllers()]
    with runner_for(backend, tmp_path, source, controllers) as again:

        def checked() -> RunResult:
            result = again()
            assert result.errors == [] and result.converged, result.errors
            return result

        yield checked


def _name(obj: Obj) -> str:
    return str(metadata(obj)["name"])


def _names(backend: Backend, resource: ResourceInfo) -> set[str]:
    return {_name(o) for o in list_all(backend.admin, resource, namespace="default").items}


def _pods_of(backend: Backend, owner: Obj) -> list[Obj]:
    """The Pods `owner` controls (not those of an earlier object of the same name that the
    garbage collector has yet to delete)."""
    pods = backend.admin.discover("v1", "pods")
    return [
        pod
        for pod in list_all(backend.admin, pods, namespace="default").items
        if any(
            ref.get("controller") and ref.get("uid") == metadata(owner)["uid"]
            for ref in metadata(pod).get("ownerReferences") or []
        )
    ]


# --- service-per-pod, service-per-pod-v2 ---------------------------------------------------


def _play_the_statefulset_controller(backend: Backend, statefulsets: ResourceInfo) -> None:
    """The StatefulSet's three Pods, Ready. On the real control plane its controller creates
    them, one at a time as the previous one becomes Ready (OrderedReady), while the test plays
    the kubelet; the memory backend has no workload controller, so the test creates them as that
    controller would (from the template, named by ordinal, owned by the StatefulSet)."""
    pods = backend.admin.discover("v1", "pods")
    statefulset = backend.admin.get(statefulsets, "nginx", namespace="default")
    replicas = statefulset["spec"]["replicas"]
    names = {f"nginx-{i}" for i in range(replicas)}

    def all_ready() -> bool:
        return names <= {metadata(p)["name"] for p in _pods_of(backend, statefulset) if ready(p)}

    if backend.plane is not None:
        with Kubelet(backend.admin, "default", expected=replicas):
            eventually(all_ready, what="the StatefulSet's Pods Ready", timeout=60)
        return
    template = statefulset["spec"]["template"]
    for name in sorted(names):
        pod: Obj = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                **copy.deepcopy(template["metadata"]),
                "name": name,
                "namespace": "default",
                "ownerReferences": [owner_reference(statefulset)],
            },
            "spec": {**copy.deepcopy(template["spec"]), "hostname": name, "subdomain": "nginx"},
        }
        pod["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] = name
        mark_ready(backend.admin, backend.admin.create(pods, pod))
    assert all_ready()


@pytest.mark.parametrize("source", port_sources())
@pytest.mark.parametrize("name", ["service-per-pod", "service-per-pod-v2"])
def test_service_per_pod(
    backend: Backend,
    mc_example: Callable[[str], Example],
    tmp_path: Path,
    source: str,
    name: str,
) -> None:
    """A Service per Pod of an annotated StatefulSet and a label on each Pod (two
    DecoratorControllers); opting out by removing the annotation runs the finalize hook, which
    removes the Services, and then our finalizer goes; opting in again brings them back;
    deleting the StatefulSet while another finalizer holds it does the same. v2: the hook finds
    its Services under `namespace/name` keys (examples/service-per-pod*/test.sh)."""
    ported = mc_example(name)
    ported.apply("my-statefulset.yaml")
    statefulsets = backend.admin.discover("apps/v1", "statefulsets")
    services = backend.admin.discover("v1", "services")
    statefulset = backend.admin.get(statefulsets, "nginx", namespace="default")
    _play_the_statefulset_controller(backend, statefulsets)

    def finalizers() -> list[str]:
        statefulset = ported.get("apps/v1", "statefulsets", "nginx", "default")
        return list(metadata(statefulset).get("finalizers") or [])

    try:
        with (
            jsonnet_server(ported.directory / "manifest") as hooks,
            _runs(ported, backend, tmp_path, source, hooks.url) as run,
        ):

            def reconciled() -> RunResult:
                hooks.calls.clear()
                return run()

            reconciled()
            # (not in test.sh) converged: the next run, as a CronJob's, writes nothing
            assert reconciled().actions_by_kind() == {}
            # Wait for per-pod Service...
            service = ported.get("v1", "services", "nginx-2", "default")
            assert service["spec"]["selector"]["pod-name"] == "nginx-2"
            assert {f"nginx-{i}" for i in range(3)} <= _names(backend, services)
            # Wait for pod-name label...
            (pod,) = [p for p in _pods_of(backend, statefulset) if _name(p) == "nginx-2"]
            assert metadata(pod)["labels"]["pod-name"] == "nginx-2"
            if name == "service-per-pod-v2":  # Verify v2 naming convention (UniformObjectMap)
                decorated = ported.get("apps/v1", "statefulsets", "nginx", "default")
                assert metadata(decorated)["annotations"]["v2-naming-verified"] == "true"
            assert DECORATOR_FINALIZER in finalizers()

            # Remove annotation to opt out of service-per-pod without deleting the StatefulSet
            _changed(
                backend,
                statefulsets,
                "nginx",
                lambda s: metadata(s)["annotations"].pop("service-per-pod-label"),
            )
            reconciled()
            assert "finalize-service-per-pod" in hooks.calls
            # Wait for per-pod Service to get cleaned up by the decorator's finalizer...
            assert not {f"nginx-{i}" for i in range(3)} & _names(backend, services)
            # Wait for the decorator's finalizer to be removed...
            assert DECORATOR_FINALIZER not in finalizers()

            # Add the annotation back to opt in again...
            _changed(
                backend,
                statefulsets,
                "nginx",
                lambda s: metadata(s)["annotations"].update({"service-per-pod-label": "pod-name"}),
            )
            reconciled()
            # Wait for per-pod Service to come back...
            service = ported.get("v1", "services", "nginx-2", "default")
            assert service["spec"]["selector"]["pod-name"] == "nginx-2"
            assert DECORATOR_FINALIZER in finalizers()

            # Append our own finalizer so we can check deletion ordering...
            _changed(
                backend,
                statefulsets,
                "nginx",
                lambda s: metadata(s).setdefault("finalizers", []).append(TEST_FINALIZER),
            )
            # Delete the StatefulSet...
            backend.admin.delete(statefulsets, "nginx", namespace="default")
            reconciled()
            assert "finalize-service-per-pod" in hooks.calls
            # Wait for per-pod Service to get cleaned up by the decorator's finalizer...
            assert not {f"nginx-{i}" for i in range(3)} & _names(backend, services)
            # Wait for the decorator's finalizer to be removed...
            assert finalizers() == [TEST_FINALIZER]  # ours still holds it, being deleted
            deleting = ported.get("apps/v1", "statefulsets", "nginx", "default")
            assert metadata(deleting).get("deletionTimestamp")
    finally:  # test.sh's cleanup: `kubectl patch statefulset nginx` with no finalizers
        with contextlib.suppress(NotFound):
            _changed(backend, statefulsets, "nginx", lambda s: metadata(s).update(finalizers=[]))
        with contextlib.suppress(NotFound):
            backend.admin.delete(statefulsets, "nginx", namespace="default")
        # the next test meets none of its Pods (the garbage collector deletes them)
        eventually(lambda: not _pods_of(backend, statefulset), what="the Pods deleted")


# --- daemonjob ------------------------------------------------------------------------------

NODE = "metacontroller-daemonjob-node"


@contextlib.contextmanager
def _a_node(backend: Backend) -> Iterator[Obj]:
    """A Ready Node for the DaemonSet to place its Pod on, deleted after. No kubelet registers
    one here: the test creates it and reports it Ready as a kubelet would, and takes off the
    `node.kubernetes.io/not-ready` taint the API server puts on a new Node (the node lifecycle
    controller's part once the kubelet reports Ready, which does not run here either)."""
    nodes = backend.admin.discover("v1", "nodes")
    node = backend.admin.create(
        nodes, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}}
    )
    try:
        ready_status = {
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]
        }
        node = backend.admin.update_status(nodes, {**node, "status": ready_status})
        spec = node.setdefault("spec", {})
        spec["taints"] = [
            t for t in spec.get("taints") or [] if t["key"] != "node.kubernetes.io/not-ready"
        ]
        yield backend.admin.update(nodes, node)
    finally:
        with contextlib.suppress(NotFound):
            backend.admin.delete(nodes, NODE)


@contextlib.contextmanager
def _the_daemonset_controller(backend: Backend) -> Iterator[None]:
    """kube-controller-manager's DaemonSet controller, on the real control plane only."""
    if backend.plane is None:
        yield
        return
    with backend.plane.more_controllers("daemonset"):
        yield


def _play_the_daemonset_controller(backend: Backend, daemonset: Obj) -> None:
    """The DaemonSet's one Pod on the one Node, Ready, and its status counting it. On the real
    control plane its controller does that (with the test as the kubelet); on the memory
    backend, which has no workload controller, the test does what that controller would."""
    daemonsets = backend.admin.discover("apps/v1", "daemonsets")
    name = _name(daemonset)

    def counted() -> bool:
        status = backend.admin.get(daemonsets, name, namespace="default").get("status") or {}
        return status.get("desiredNumberScheduled") == 1 and status.get("numberReady") == 1

    if backend.plane is not None:
        # the test plays the kubelet only now: a Pod Ready before the first run's checks would
        # let that run (its later passes) see the job finished, as a quick kubelet can
        with Kubelet(backend.admin, "default", 1):
            eventually(counted, what="the DaemonSet's Pod Ready and counted", timeout=60)
        return
    pods = backend.admin.discover("v1", "pods")
    template = daemonset["spec"]["template"]
    on_node = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE]}]}
                ]
            }
        }
    }
    pod: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            **copy.deepcopy(template["metadata"]),
            "name": f"{name}-{uuid.uuid4().hex[:5]}",
            "namespace": "default",
            "ownerReferences": [owner_reference(daemonset)],
        },
        "spec": {**copy.deepcopy(template["spec"]), "affinity": on_node},
    }
    pod["metadata"]["labels"]["pod-template-generation"] = "1"
    mark_ready(backend.admin, backend.admin.create(pods, pod))
    status = {
        "observedGeneration": metadata(daemonset)["generation"],
        "currentNumberScheduled": 1,
        "desiredNumberScheduled": 1,
        "numberMisscheduled": 0,
        "numberReady": 1,
        "numberAvailable": 1,
        "updatedNumberScheduled": 1,
    }
    backend.admin.update_status(daemonsets, {**daemonset, "status": status})
    assert counted()


@pytest.mark.parametrize("source", port_sources())
def test_daemonjob(
    backend: Backend, mc_example: Callable[[str], Example], tmp_path: Path, source: str
) -> None:
    """A DaemonJob runs a DaemonSet until its Pod on every Node is Ready, then records its
    completion and deletes the DaemonSet (examples/daemonjob/test.sh)."""
    ported = mc_example("daemonjob")
    ported.install_crds()
    ported.apply("my-daemonjob.yaml")
    daemonsets = backend.admin.discover("apps/v1", "daemonsets")

    def job() -> Obj:
        return ported.get("ctl.example.com/v1", "daemonjobs", "hello-world", "default")

    with (
        _a_node(backend),
        _the_daemonset_controller(backend),
        hook_server(ported.directory / "manifest" / "sync.py") as url,
        _runs(ported, backend, tmp_path, source, url) as run,
    ):
        run()
        daemonset = backend.admin.get(daemonsets, "hello-world-dj", namespace="default")
        assert job()["status"]["conditions"] == [{"type": "Complete", "status": "False"}]
        _play_the_daemonset_controller(backend, daemonset)
        run()
    # Wait for successful completion...
    assert job()["status"]["conditions"][0]["status"] == "True"
    # Check that DaemonSet gets cleaned up after finishing...
    assert "hello-world-dj" not in _names(backend, daemonsets)


# --- indexedjob -----------------------------------------------------------------------------


def _succeeded(backend: Backend, pod: Obj) -> Obj:
    """The Pod's containers ran and exited 0, as its kubelet would report it."""
    pods = backend.admin.discover("v1", "pods")
    status = {
        "phase": "Succeeded",
        "conditions": [{"type": "Ready", "status": "False", "reason": "PodCompleted"}],
    }
    return backend.admin.update_status(pods, {**pod, "status": status})


@pytest.mark.parametrize("source", port_sources())
def test_indexedjob(
    backend: Backend, mc_example: Callable[[str], Example], tmp_path: Path, source: str
) -> None:
    """An IndexedJob runs 10 Pods, 2 at a time, each given its index in `JOB_INDEX`, and counts
    them as they succeed until it is complete (examples/indexedjob/test.sh). Between runs the
    test plays the kubelet: every Pod the run created exits 0."""
    ported = mc_example("indexedjob")
    ported.install_crds()
    ported.apply("my-indexedjob.yaml")

    def job() -> Obj:
        return ported.get("ctl.enisoc.com/v1", "indexedjobs", "print-index", "default")

    with (
        hook_server(ported.directory / "manifest" / "sync.py") as url,
        _runs(ported, backend, tmp_path, source, url) as run,
    ):
        for _ in range(7):  # five rounds of two Pods, then the count
            run()
            if job()["status"]["succeeded"] == 10:
                break
            owned = _pods_of(backend, job())
            running = [p for p in owned if (p.get("status") or {}).get("phase") != "Succeeded"]
            assert len(running) == 2, [_name(p) for p in running]  # spec.parallelism
            for pod in running:
                _succeeded(backend, pod)
    # Wait for 10 successful completions...
    status = job()["status"]
    assert status["succeeded"] == 10 and status["active"] == 0 and status["failed"] == 0
    assert status["conditions"] == [{"type": "Complete", "status": "True"}]
    by_name = {_name(p): p for p in _pods_of(backend, job())}
    assert set(by_name) == {f"print-index-{i}" for i in range(10)}
    # Check that correct index is printed: `kubectl logs print-index-9` is "9" there. No
    # container runs here (no kubelet), so what is checked is what makes it print 9: its one
    # container runs `echo ${JOB_INDEX}` with JOB_INDEX=9 (and every other Pod its own index).
    for name, pod in by_name.items():
        (container,) = pod["spec"]["containers"]
        assert container["command"] == ["sh", "-c", "echo ${JOB_INDEX}"]
        index = name.removeprefix("print-index-")
        assert {"name": "JOB_INDEX", "value": index} in container["env"], container["env"]


def test_the_ported_examples_are_metacontrollers_files_unchanged() -> None:
    """Nothing of an example is edited for the port: its controllers still call the Service of
    its own Deployment (pointed at loopback only when a test runs them). The Jsonnet examples'
    Deployment runs `metacontroller/jsonnetd` in the directory where their hooks are mounted,
    and each hook URL's path is one of those files' names without `.jsonnet`: what
    tests/support/mc_jsonnet.py serves."""
    for name in ("service-per-pod", "service-per-pod-v2", "daemonjob", "indexedjob"):
        ported = Example(name, backend=None)  # type: ignore[arg-type]
        manifests = ported.directory / "manifest"
        urls = [
            urlsplit(hook["webhook"]["url"])
            for controller in ported.controllers()
            for hook in controller["spec"]["hooks"].values()
        ]
        assert urls and all(u.hostname and u.hostname.endswith(".metacontroller") for u in urls)
        documents = [
            d
            for m in manifests.glob("*.yaml")
            for d in yaml.safe_load_all(m.read_text())
            if d and "kind" in d
        ]
        assert {"Deployment", "Service"} <= {d["kind"] for d in documents}
        if not name.startswith("service-per-pod"):
            assert (manifests / "sync.py").is_file()
            continue
        (deployment,) = [d for d in documents if d["kind"] == "Deployment"]
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        assert container["image"].startswith("metacontroller/jsonnetd:")
        assert [m["mountPath"] for m in container["volumeMounts"]] == [container["workingDir"]]
        assert {u.path.lstrip("/") for u in urls} == set(hooks_of(manifests))
