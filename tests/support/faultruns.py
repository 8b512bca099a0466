"""Runs under API faults, shared by tests/integration/test_faults.py (small) and
scripts/faults.py (the figures): a scenario is set up on a backend, `reconcile` runs through a
faulty connection until a clean dry run finds nothing left to do (at most `max_runs` runs), and
the invariants are checked: no child lost or duplicated, nothing of another owner touched, no
rollout left half-applied."""

from __future__ import annotations

import contextlib
import json
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from reconcile.cluster import AlreadyExists, list_all
from reconcile.cluster.kubeconfig import load_connection
from reconcile.cluster.live import LiveCluster, LiveOptions
from reconcile.cluster.protocol import Cluster
from reconcile.cluster.types import ResourceInfo
from reconcile.config import ReconcileSettings
from reconcile.crds import CRD_DIR
from reconcile.objects.meta import labels_of, metadata
from reconcile.results import RunResult
from reconcile.runner.run import RunLoop
from tests.support.backends import Backend
from tests.support.controllers import composite, webhook, write_controllers
from tests.support.controlplane import TESTED_USER
from tests.support.examples import EXAMPLES, load_example
from tests.support.faults import FaultPlan, FaultProxy, FaultyCluster, proxy_kubeconfig
from tests.support.hookserver import serve
from tests.support.kubelet import Kubelet, ready
from tests.support.poll import eventually

REQUEST_TIMEOUT = 2.0  # the runs' --request-timeout; a slow fault answers after SLOW_SECONDS
SLOW_SECONDS = 2.5


@dataclass
class Outcome:
    scenario: str
    backend: str
    runs: int | None = None  # faulty runs until converged; None: not within max_runs
    requests: int = 0
    faulted: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)  # invariants broken
    crashed: list[str] = field(default_factory=list)  # exceptions that escaped a run

    @property
    def ok(self) -> bool:
        return self.runs is not None and not self.problems and not self.crashed

    def line(self) -> str:
        faults = ", ".join(f"{k} {n}" for k, n in sorted(self.faulted.items())) or "none"
        runs = f"converged after {self.runs} run(s)" if self.runs else "NOT converged"
        verdict = "ok" if self.ok else "FAILED: " + "; ".join(self.problems + self.crashed)
        return (
            f"{self.backend:6} {self.scenario:28} {runs}; {self.requests} requests, "
            f"{sum(self.faulted.values())} faulted ({faults}); {verdict}"
        )


@contextlib.contextmanager
def faulty(backend: Backend, plan: FaultPlan, tmp: Path) -> Iterator[Cluster]:
    """The tested connection, with faults: through a FaultProxy (live) or a FaultyCluster."""
    if backend.plane is None:
        yield FaultyCluster(backend.cluster, plan)
        return
    plan.slow_seconds = SLOW_SECONDS
    config = json.loads(backend.plane.kubeconfig.read_text())
    with FaultProxy(backend.plane.server, plan) as proxy:
        path = tmp / f"proxy-{uuid.uuid4().hex[:6]}.kubeconfig"
        path.write_text(json.dumps(proxy_kubeconfig(config, proxy.url)))
        connection = load_connection(str(path), context=TESTED_USER)
        cluster = LiveCluster(
            connection.configuration, LiveOptions(qps=0, request_timeout=REQUEST_TIMEOUT)
        )
        try:
            yield cluster
        finally:
            cluster.close()


def settings(controller: Path, **extra: Any) -> ReconcileSettings:
    options: dict[str, Any] = {
        "controller_paths": (str(controller),),
        "controllers_from_cluster": False,
        "max_duration": 60.0,
        "poll_interval": 0.1,
        "workers": 4,
    }
    options.update(extra)
    return ReconcileSettings(**options)


def converged(backend: Backend, controller: Path) -> bool:
    """A clean dry run (no faults) finds nothing to change and no error."""
    result = RunLoop(backend.cluster, settings(controller, dry_run=True)).run()
    return not result.errors and not result.actions_by_kind(applied=False)


def run_until_converged(
    backend: Backend,
    plan: FaultPlan,
    controller: Path,
    outcome: Outcome,
    tmp: Path,
    max_runs: int,
    between: Callable[[], None] = lambda: None,
) -> None:
    before = plan.requests
    with faulty(backend, plan, tmp) as cluster:
        for number in range(1, max_runs + 1):
            try:
                result: RunResult | None = RunLoop(cluster, settings(controller)).run()
            except Exception as exc:  # a crash is a finding: nothing may escape a run
                outcome.crashed.append(f"run {number}: {type(exc).__name__}: {exc}")
                result = None
            between()
            plan.enabled = False
            done = converged(backend, controller)
            plan.enabled = True
            if done:
                outcome.runs = number
                break
            del result
    outcome.requests += plan.requests - before
    outcome.faulted.update(plan.counts)


# -- a composite benchmark -----------------------------------------------------------------


def composite_scenario(
    backend: Backend, plan: FaultPlan, tmp: Path, *, parents: int, children: int, max_runs: int
) -> Outcome:
    outcome = Outcome(f"{parents} parents x {children} children", backend.name)
    kind = backend.apply_crd("FaultParent")
    namespaces = backend.admin.discover("v1", "namespaces")
    configmaps = backend.admin.discover("v1", "configmaps")
    ns = f"faults-{uuid.uuid4().hex[:6]}"
    backend.admin.create(
        namespaces, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
    )
    names = [f"p{i:04d}" for i in range(parents)]
    for name in names:
        backend.admin.create(
            kind,
            {
                "apiVersion": kind.api_version,
                "kind": kind.kind,
                "metadata": {"name": name, "namespace": ns},
                "spec": {"selector": {"matchLabels": {"parent": name}}},
            },
        )
    # Another owner's objects that match the selectors: never to be touched.
    foreign = {}
    for name in names[:10]:
        obj = backend.admin.create(
            configmaps,
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": f"{name}-foreign",
                    "namespace": ns,
                    "labels": {"parent": name},
                    "ownerReferences": [
                        {
                            "apiVersion": "example.com/v1",
                            "kind": "Other",
                            "name": "other",
                            "uid": "11111111-2222-3333-4444-555555555555",
                            "controller": True,
                        }
                    ],
                },
                "data": {"mine": "no"},
            },
        )
        foreign[metadata(obj)["name"]] = metadata(obj)["resourceVersion"]

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        name = request["parent"]["metadata"]["name"]
        observed = request["children"].get("ConfigMap.v1", {})
        return {
            "status": {"children": len(observed)},
            "children": [
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": f"{name}-{i}", "labels": {"parent": name}},
                    "data": {"index": str(i)},
                }
                for i in range(children)
            ],
        }

    with serve(sync) as server:
        controller = write_controllers(
            tmp / f"composite-{ns}",
            composite(
                "faults",
                kind,
                [("v1", "configmaps", "InPlace")],
                {"sync": webhook(server.url, timeout="10s")},
            ),
        )
        run_until_converged(backend, plan, controller, outcome, tmp, max_runs)
    items = list_all(backend.admin, configmaps, namespace=ns).items
    by_name = Counter(metadata(o)["name"] for o in items)
    expected = {f"{n}-{i}" for n in names for i in range(children)}
    ours = {n for n in by_name if not n.endswith("-foreign") and n != "kube-root-ca.crt"}
    if missing := expected - ours:
        outcome.problems.append(f"{len(missing)} children lost, e.g. {sorted(missing)[:3]}")
    if extra := ours - expected:
        outcome.problems.append(f"{len(extra)} children not desired, e.g. {sorted(extra)[:3]}")
    for obj in items:
        name = metadata(obj)["name"]
        if name in foreign and metadata(obj)["resourceVersion"] != foreign[name]:
            outcome.problems.append(f"another owner's ConfigMap {name} was changed")
        elif name in expected:
            owner = labels_of(obj).get("parent")
            refs = [r for r in metadata(obj).get("ownerReferences", []) if r.get("controller")]
            if len(refs) != 1 or refs[0]["name"] != owner:
                outcome.problems.append(f"ConfigMap {name} is not controlled by its parent")
    for parent in list_all(backend.admin, kind, namespace=ns).items:
        if (parent.get("status") or {}).get("children") != children:
            outcome.problems.append(f"{metadata(parent)['name']}: status not caught up")
            break
    backend.delete_quietly(namespaces, ns, None)
    return outcome


# -- examples ------------------------------------------------------------------------------


def install_revision_crd(backend: Backend) -> None:
    crds = backend.admin.discover("apiextensions.k8s.io/v1", "customresourcedefinitions")
    with contextlib.suppress(AlreadyExists):
        backend.admin.create(
            crds, yaml.safe_load((CRD_DIR / "controllerrevisions.yaml").read_text())
        )
    eventually(
        lambda: backend.cluster.discover("metacontroller.k8s.io/v1alpha1", "controllerrevisions")
    )


def _count(backend: Backend, resources: list[ResourceInfo], namespace: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    for resource in resources:
        for obj in list_all(backend.admin, resource, namespace=namespace).items:
            if metadata(obj)["name"] != "kube-root-ca.crt" and not metadata(obj).get(
                "deletionTimestamp"
            ):
                counts[resource.kind] += 1
    return counts


EXAMPLE_CASES: dict[str, tuple[tuple[str, ...], str, dict[str, int]]] = {
    # example: (files, its namespace, objects expected per kind there once converged)
    "hello-world": (("crd.yaml", "hello.yaml"), "hello", {"Pod": 1, "HelloWorld": 1}),
    "bucket-quota": (("crd.yaml", "bucket.yaml"), "storage", {"Bucket": 2}),
    "configmap-transform": (
        ("crd.yaml", "transform.yaml"),
        "shop",
        {"ConfigMap": 5, "ConfigMapTransform": 1},
    ),
}


def example_scenario(
    backend: Backend, plan: FaultPlan, tmp: Path, example: str, *, max_runs: int
) -> Outcome:
    files, namespace, expected = EXAMPLE_CASES[example]
    outcome = Outcome(f"example {example}", backend.name)
    loaded = load_example(backend, example, *files)
    ns = loaded.name(namespace)
    controller = EXAMPLES / example / "controller.yaml"
    try:
        run_until_converged(backend, plan, controller, outcome, tmp, max_runs)
        resources = [backend.admin.discover(*_resource_of(backend, k)) for k in expected]
        counts = _count(backend, resources, ns)
        if dict(counts) != expected:
            outcome.problems.append(f"objects {dict(counts)}, expected {expected}")
    finally:
        loaded.cleanup()
    return outcome


def _resource_of(backend: Backend, kind: str) -> tuple[str, str]:
    builtin = {"Pod": "v1", "ConfigMap": "v1", "Service": "v1"}
    return (builtin.get(kind, "example.com/v1"), kind)


def rollout_scenario(backend: Backend, plan: FaultPlan, tmp: Path, *, max_runs: int) -> Outcome:
    """statefulset-like: three Pods created, then a template change rolled out, both under
    faults; a second CatSet's Pods must come through untouched."""
    outcome = Outcome("example statefulset-like", backend.name)
    install_revision_crd(backend)
    loaded = load_example(backend, "statefulset-like", "crd.yaml", "catset.yaml")
    ns = loaded.name("cats")
    catsets = backend.admin.discover("example.com/v1", "catsets")
    pods = backend.admin.discover("v1", "pods")
    controller = EXAMPLES / "statefulset-like" / "controller.yaml"
    try:
        with Kubelet(backend.admin, ns, expected=3) as kubelet:
            first = Outcome(outcome.scenario, backend.name)
            run_until_converged(backend, plan, controller, first, tmp, max_runs)
            eventually(
                lambda: (
                    len(list_all(backend.admin, pods, namespace=ns).items) == 3
                    and all(ready(p) for p in list_all(backend.admin, pods, namespace=ns).items)
                ),
                what="three Ready Pods",
            )
            kubelet.max_unavailable = 0
            parent = backend.admin.get(catsets, "web", namespace=ns)
            parent["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.29"
            backend.admin.update(catsets, parent)
            run_until_converged(backend, plan, controller, outcome, tmp, max_runs)
            outcome.runs = first.runs and outcome.runs and max(first.runs, outcome.runs)
            outcome.requests += first.requests
            outcome.faulted.update(first.faulted)
            outcome.crashed += first.crashed
            if kubelet.max_unavailable > 1:
                outcome.problems.append(f"{kubelet.max_unavailable} Pods unavailable at once")
        images = {
            metadata(p)["name"]: p["spec"]["containers"][0]["image"]
            for p in list_all(backend.admin, pods, namespace=ns).items
        }
        if sorted(images) != ["web-0", "web-1", "web-2"] or set(images.values()) != {"nginx:1.29"}:
            outcome.problems.append(f"rollout left half-applied: {images}")
        parent = backend.admin.get(catsets, "web", namespace=ns)
        conditions = {c["type"]: c for c in (parent.get("status") or {}).get("conditions", [])}
        if conditions.get("Updated", {}).get("reason") != "OnLatestRevision":
            outcome.problems.append(f"Updated condition: {conditions.get('Updated')}")
        backend.admin.delete(catsets, "web", namespace=ns)
        with Kubelet(backend.admin, ns, expected=0):
            RunLoop(backend.cluster, settings(controller)).run()
    finally:
        loaded.cleanup()
    return outcome
