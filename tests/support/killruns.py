"""Killing `reconcile` anywhere, shared by tests/integration/test_faults.py (a few points) and
`scripts/faults.py kill` (a hundred).

The statefulset-like example goes through rollouts (a template change, one Pod at a time) and
finalizations (the CatSet deleted, its finalize hook scaling to zero) while runs die at their
N-th write, before the write reaches the server or just after (the server did it, the process
never learned). On the live backend the real command is killed with SIGKILL by the proxy in
front of the API server; in-process, the run dies where a `Crash` is raised. Watched all along:
never two Pods unavailable at once in a rollout, never the finalizer removed while the finalize
hook still had Pods to remove, never another owner's object touched; and the next runs always
converge."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from reconcile.cluster import NotFound, list_all
from reconcile.cluster.protocol import Cluster
from reconcile.cluster.types import Obj, ResourceInfo
from reconcile.objects.meta import metadata
from reconcile.runner.run import RunLoop
from tests.support.backends import Backend
from tests.support.controlplane import TESTED_USER
from tests.support.crash import Crash, CrashingCluster
from tests.support.examples import EXAMPLES, load_example
from tests.support.faultruns import install_revision_crd, settings
from tests.support.faults import FaultPlan, FaultProxy, KillSwitch, proxy_kubeconfig
from tests.support.kubelet import Kubelet
from tests.support.wrapped import ForwardingCluster

_T = TypeVar("_T")

CONTROLLER = EXAMPLES / "statefulset-like" / "controller.yaml"
FINALIZER = "metacontroller.io/compositecontroller-catset-controller"


@dataclass
class KillOutcome:
    backend: str
    kills: int = 0
    where: Counter[str] = field(default_factory=Counter)
    runs: int = 0
    rollouts: int = 0
    finalizations: int = 0
    max_unavailable: int = 0
    early_finalizer_removals: int = 0
    foreign_touched: list[str] = field(default_factory=list)
    stuck: list[str] = field(default_factory=list)  # phases that did not converge
    max_runs_to_converge: int = 0

    @property
    def ok(self) -> bool:
        return (
            self.max_unavailable <= 1
            and not self.early_finalizer_removals
            and not self.foreign_touched
            and not self.stuck
        )

    def lines(self) -> list[str]:
        where = ", ".join(f"{k} {n}" for k, n in self.where.most_common())
        return [
            f"{self.backend:6} {self.kills} kills over {self.runs} runs ({self.rollouts} "
            f"rollouts, {self.finalizations} finalizations); killed at: {where}",
            f"       after a kill the next runs converged (at most {self.max_runs_to_converge} "
            f"run(s) to finish a phase); Pods unavailable at once in a rollout: at most "
            f"{self.max_unavailable}; finalizer removed before finalized: true: "
            f"{self.early_finalizer_removals}; another owner's objects touched: "
            f"{len(self.foreign_touched)}; {'ok' if self.ok else 'FAILED'}"
            + (f" {self.stuck}" if self.stuck else ""),
        ]


def _kind_of(what: str) -> str:
    """`before update catsets/status` → `status`; the request's role in a sync."""
    if "/status" in what:
        return "status write"
    if "controllerrevisions" in what:
        return "revision write"
    if "catsets" in what:
        return "parent write (finalizer)"
    if "events" in what:
        return "event"
    return "child write"


class _FinalizerWatch:
    """Called with every write the run sends: a write that takes the finalizer off the CatSet
    while it still has Pods is the bug this looks for."""

    def __init__(self, admin: Cluster, namespace: str) -> None:
        self.admin = admin
        self.namespace = namespace
        self.early = 0

    def check(self, resource: str, body: Any) -> None:
        if resource != "catsets" or not isinstance(body, dict):
            return
        if FINALIZER in (metadata(body).get("finalizers") or []):
            return
        if not metadata(body).get("deletionTimestamp"):
            return
        pods = self.admin.discover("v1", "pods")
        left = [
            p
            for p in list_all(self.admin, pods, namespace=self.namespace).items
            if metadata(p)["name"].startswith(f"{metadata(body)['name']}-")
            and not metadata(p).get("deletionTimestamp")
        ]
        if left:
            self.early += 1


class _Watched(ForwardingCluster):
    """The in-process connection with the finalizer watch on its parent updates."""

    def __init__(self, inner: Cluster, watch: _FinalizerWatch) -> None:
        super().__init__(inner)
        self.watch = watch

    def write(self, what: str, body: Obj | None, call: Callable[[], _T]) -> _T:
        if what == "update catsets":
            self.watch.check("catsets", body)
        return call()


def _foreign(backend: Backend, ns: str) -> dict[str, str]:
    """A claim that matches the CatSet's selector but is controlled by another owner."""
    pvcs = backend.admin.discover("v1", "persistentvolumeclaims")
    configmaps = backend.admin.discover("v1", "configmaps")
    # a real owner: the garbage collector deletes what an owner that does not exist owns
    owner = backend.admin.create(
        configmaps,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "someone-else", "namespace": ns},
        },
    )
    claim = backend.admin.create(
        pvcs,
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": "data-intruder",
                "namespace": ns,
                "labels": {"app": "web"},
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "name": "someone-else",
                        "uid": metadata(owner)["uid"],
                        "controller": True,
                    }
                ],
            },
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
            },
        },
    )
    return {"data-intruder": metadata(claim)["resourceVersion"]}


class _Runs:
    """One way to run `reconcile` that may die at its `at`-th write."""

    def __init__(self, backend: Backend, ns: str, tmp: Path) -> None:
        self.backend = backend
        self.watch = _FinalizerWatch(backend.admin, ns)
        self.tmp = tmp

    def run(self, at: int | None, after: bool) -> str | None:
        """Run once; the kill point's description when it died there, else None."""
        if self.backend.plane is None:
            return self._in_process(at, after)
        return self._subprocess(at, after)

    def _in_process(self, at: int | None, after: bool) -> str | None:
        watched = _Watched(self.backend.cluster, self.watch)
        cluster: Cluster = watched
        if at is not None:
            cluster = CrashingCluster(watched, at - 1, after=after)
        try:
            RunLoop(cluster, settings(CONTROLLER, workers=1, max_duration=30.0)).run()
        except Crash:
            assert isinstance(cluster, CrashingCluster)
            return cluster.where
        return None

    def _subprocess(self, at: int | None, after: bool) -> str | None:
        plane = self.backend.plane
        assert plane is not None
        kill = KillSwitch(at=at or 0, after=after)
        proxy = FaultProxy(plane.server, FaultPlan(0.0), kill if at else None)
        proxy.observe = self._observe
        with proxy:
            path = self.tmp / f"kill-{uuid.uuid4().hex[:6]}.kubeconfig"
            config = json.loads(plane.kubeconfig.read_text())
            path.write_text(json.dumps(proxy_kubeconfig(config, proxy.url)))
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "reconcile",
                    "--kubeconfig",
                    str(path),
                    "--context",
                    TESTED_USER,
                    "--no-cluster-controllers",
                    "--controllers",
                    str(CONTROLLER),
                    "--workers",
                    "1",
                    "--max-duration",
                    "30",
                    "--poll-interval",
                    "0.1",
                    "--report-format",
                    "none",
                    "--log-level",
                    "error",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            kill.pid = process.pid
            process.wait(timeout=120)
        return kill.where if kill.fired else None

    def _observe(self, method: str, path: str, body: bytes | None) -> None:
        if method != "PUT" or "/catsets/" not in path or path.endswith("/status") or not body:
            return
        self.watch.check("catsets", json.loads(body))


def kill_scenario(
    backend: Backend, tmp: Path, *, points: int, seed: int = 1, max_writes: int = 8
) -> KillOutcome:
    outcome = KillOutcome(backend.name)
    chance = random.Random(seed)
    install_revision_crd(backend)
    loaded = load_example(backend, "statefulset-like", "crd.yaml", "catset.yaml")
    ns = loaded.name("cats")
    catsets = backend.admin.discover("example.com/v1", "catsets")
    pvcs = backend.admin.discover("v1", "persistentvolumeclaims")
    template = backend.admin.get(catsets, "web", namespace=ns)
    foreign = _foreign(backend, ns)
    runs = _Runs(backend, ns, tmp)
    images = iter(f"nginx:1.{n}" for n in range(26, 1000))
    phase = "create"
    runs_in_phase = 0
    try:
        with Kubelet(backend.admin, ns, expected=3) as kubelet:
            while outcome.kills < points:
                killed = runs.run(chance.randint(1, max_writes), chance.random() < 0.5)
                outcome.runs += 1
                runs_in_phase += 1
                if killed:
                    outcome.kills += 1
                    outcome.where[f"{killed.split(' ', 1)[0]} {_kind_of(killed)}"] += 1
                    continue
                if not _phase_done(backend, catsets, ns, phase):
                    if runs_in_phase > 40:
                        outcome.stuck.append(f"{phase} did not finish in 40 runs")
                        break
                    continue
                outcome.max_runs_to_converge = max(outcome.max_runs_to_converge, runs_in_phase)
                runs_in_phase = 0
                if phase == "rollout":
                    outcome.rollouts += 1
                    outcome.max_unavailable = max(outcome.max_unavailable, kubelet.max_unavailable)
                if phase == "finalize":
                    outcome.finalizations += 1
                    kubelet.expected = 3
                    fresh = {k: template[k] for k in ("apiVersion", "kind", "spec")}
                    fresh["metadata"] = {"name": "web", "namespace": ns}
                    backend.admin.create(catsets, fresh)
                    phase = "create"
                elif chance.random() < 0.7:
                    kubelet.max_unavailable = 0
                    parent = backend.admin.get(catsets, "web", namespace=ns)
                    parent["spec"]["template"]["spec"]["containers"][0]["image"] = next(images)
                    backend.admin.update(catsets, parent)
                    phase = "rollout"
                else:
                    kubelet.expected = 0  # scaling to zero is not unavailability
                    backend.admin.delete(catsets, "web", namespace=ns)
                    phase = "finalize"
            # let the last phase finish, with no more kills
            for finishing in range(1, 11):
                runs.run(None, False)
                if _phase_done(backend, catsets, ns, phase):
                    outcome.max_runs_to_converge = max(outcome.max_runs_to_converge, finishing)
                    break
            else:
                outcome.stuck.append(f"the last {phase} did not finish")
            if phase == "rollout":
                outcome.max_unavailable = max(outcome.max_unavailable, kubelet.max_unavailable)
        outcome.early_finalizer_removals = runs.watch.early
        for name, version in foreign.items():
            try:
                now = backend.admin.get(pvcs, name, namespace=ns)
            except NotFound:
                outcome.foreign_touched.append(f"{name} deleted")
                continue
            if metadata(now)["resourceVersion"] != version:
                outcome.foreign_touched.append(f"{name} changed")
    finally:
        _let_go(backend, catsets, ns, runs)
        loaded.cleanup()
    return outcome


def _phase_done(backend: Backend, catsets: ResourceInfo, ns: str, phase: str) -> bool:
    if phase == "finalize":
        try:
            backend.admin.get(catsets, "web", namespace=ns)
        except NotFound:
            return True
        return False
    parent = backend.admin.get(catsets, "web", namespace=ns)
    image = parent["spec"]["template"]["spec"]["containers"][0]["image"]
    pods = backend.admin.discover("v1", "pods")
    live = [
        p
        for p in list_all(backend.admin, pods, namespace=ns).items
        if metadata(p)["name"].startswith("web-") and not metadata(p).get("deletionTimestamp")
    ]
    conditions = {c["type"]: c for c in (parent.get("status") or {}).get("conditions", [])}
    return (
        len(live) == 3
        and all(p["spec"]["containers"][0]["image"] == image for p in live)
        and conditions.get("Updated", {}).get("reason") == "OnLatestRevision"
    )


def _let_go(backend: Backend, catsets: ResourceInfo, ns: str, runs: _Runs) -> None:
    try:
        backend.admin.delete(catsets, "web", namespace=ns)
    except NotFound:
        return
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not _phase_done(backend, catsets, ns, "finalize"):
        runs.run(None, False)


__all__ = ["KillOutcome", "kill_scenario"]
