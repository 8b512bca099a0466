"""The two backends every integration test runs on, behind one small test-side interface."""

from __future__ import annotations

import contextlib
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from reconcile.cluster.errors import ApiError
from reconcile.cluster.protocol import Cluster
from reconcile.cluster.stats import RequestStats
from reconcile.cluster.types import Obj, ResourceInfo
from tests.support.controlplane import ControlPlane
from tests.support.poll import eventually

MUTATING_VERBS = frozenset(RequestStats.MUTATING)


@dataclass(frozen=True)
class Mark:
    audit_events: int = 0
    stats: Counter[tuple[str, str]] = field(default_factory=Counter)


@dataclass
class Backend:
    """`cluster` is what the code under test uses; `admin` is for set-up and for playing the
    kubelet. On the live backend they are different token users, so the API server's audit log
    counts exactly what the code under test sent."""

    name: str
    cluster: Cluster
    admin: Cluster
    plane: ControlPlane | None = None

    def mark(self) -> Mark:
        """A point in the request history of the code under test."""
        if self.plane is not None:
            return Mark(audit_events=len(self.plane.audit_events()))
        return Mark(stats=self.cluster.stats.snapshot())

    def requests_since(self, mark: Mark) -> Counter[str]:
        """Requests the code under test sent since `mark`, by verb, as the API server's audit
        log (or the in-process store) counted them."""
        if self.plane is not None:
            events = self.plane.audit_events()[mark.audit_events :]
            return Counter(str(e["verb"]) for e in events)
        counts: Counter[str] = Counter()
        for (verb, _), n in (self.cluster.stats.snapshot() - mark.stats).items():
            counts[verb] += n
        return counts

    def lists_since(self, mark: Mark) -> Counter[str]:
        """The LIST requests (each page one) the code under test sent since `mark`, by
        group/resource (`configmaps`, `widgets.example.com`)."""
        if self.plane is not None:
            counts: Counter[str] = Counter()
            for event in self.plane.audit_events()[mark.audit_events :]:
                if event.get("verb") == "list":
                    ref = event.get("objectRef") or {}
                    resource, group = str(ref.get("resource")), ref.get("apiGroup")
                    counts[f"{resource}.{group}" if group else resource] += 1
            return counts
        since = self.cluster.stats.snapshot() - mark.stats
        return Counter({r: n for (verb, r), n in since.items() if verb == "list"})

    def mutations_since(self, mark: Mark) -> Counter[str]:
        return Counter({v: n for v, n in self.requests_since(mark).items() if v in MUTATING_VERBS})

    def as_manager(self, field_manager: str) -> Cluster:
        """An admin client whose writes the server files under another field manager (as
        `kubectl edit` is `kubectl-edit`)."""
        if self.plane is None:
            from reconcile.cluster.memory import MemoryCluster

            assert isinstance(self.admin, MemoryCluster)
            return self.admin.with_own_stats(field_manager=field_manager)
        from reconcile.cluster.kubeconfig import load_connection
        from reconcile.cluster.live import LiveCluster, LiveOptions
        from tests.support.controlplane import ADMIN_USER

        connection = load_connection(str(self.plane.kubeconfig), context=ADMIN_USER)
        return LiveCluster(connection.configuration, LiveOptions(user_agent=field_manager))

    def resource(self, api_version: str, name: str) -> ResourceInfo:
        return self.admin.discover(api_version, name)

    def apply_crd(
        self, kind: str, *, scope: str = "Namespaced", status: bool = True, group: str = ""
    ) -> ResourceInfo:
        """Create a CRD (a unique group per call: the live cluster is shared between tests)
        and wait until discovery serves it."""
        group = group or f"t{uuid.uuid4().hex[:8]}.example.com"
        plural = kind.lower() + "s"
        crd = crd_manifest(group, kind, plural, scope=scope, status=status)
        crds = self.admin.discover("apiextensions.k8s.io/v1", "customresourcedefinitions")
        self.admin.create(crds, crd)
        return eventually(
            lambda: self.cluster.discover(f"{group}/v1", plural),
            what=f"{plural}.{group} to be served",
        )

    def delete_quietly(self, resource: ResourceInfo, name: str, namespace: str | None) -> None:
        with contextlib.suppress(ApiError):
            self.admin.delete(resource, name, namespace=namespace)


def crd_manifest(
    group: str, kind: str, plural: str, *, scope: str = "Namespaced", status: bool = True
) -> Obj:
    version: dict[str, Any] = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {
            "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        },
    }
    if status:
        version["subresources"] = {"status": {}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
            "versions": [version],
        },
    }
