"""Playing the kubelet (no kubelet runs in the test control plane): Pods become Ready when the
test says so, and the largest number of Pods unavailable at once is recorded."""

from __future__ import annotations

import threading
from typing import Any

from reconcile.cluster import ApiError, list_all
from reconcile.cluster.protocol import Cluster
from reconcile.cluster.types import Obj
from reconcile.objects.meta import is_deleting, metadata


def ready(pod: Obj) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def mark_ready(cluster: Cluster, pod: Obj) -> Obj:
    pods = cluster.discover("v1", "pods")
    status: dict[str, Any] = {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}],
    }
    return cluster.update_status(pods, {**pod, "status": status})


class Kubelet:
    """A thread that marks every Pod of a namespace Ready (when `auto_ready`) and records, at
    every look, how many of the expected Pods were missing, deleting or not Ready."""

    def __init__(self, cluster: Cluster, namespace: str, expected: int) -> None:
        self.cluster = cluster
        self.namespace = namespace
        self.expected = expected
        self.auto_ready = True
        self.max_unavailable = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> Kubelet:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _loop(self) -> None:
        pods = self.cluster.discover("v1", "pods")
        while not self._stop.wait(0.05):
            try:
                items = list_all(self.cluster, pods, namespace=self.namespace).items
                available = 0
                for pod in items:
                    if is_deleting(pod):
                        continue
                    if ready(pod):
                        available += 1
                    elif self.auto_ready:
                        mark_ready(self.cluster, pod)
                self.max_unavailable = max(self.max_unavailable, self.expected - available)
            except ApiError:
                continue  # a conflict with the controller's own write: look again

    def images(self) -> dict[str, str]:
        pods = self.cluster.discover("v1", "pods")
        return {
            metadata(p)["name"]: p["spec"]["containers"][0]["image"]
            for p in list_all(self.cluster, pods, namespace=self.namespace).items
            if not is_deleting(p)
        }
