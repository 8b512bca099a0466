"""The `Cluster` contract for writes of a built-in object's status subresource (PUT .../status),
on the real API server and on the memory backend (behaving as the same release), on each release
tested: what the kind's schema drops (unknown fields, an `observedGeneration` the kind has none
of), what its defaulting gives back (a Namespace's `phase: Active`, a claim's `Pending`), what is
reset from the stored object (the spec; a Deployment's labels, a Pod's owner references) and what
the write may change (the status, labels, annotations, finalizers), the zero values Go prints
(`lastTransitionTime: null`), and the kind's status validation in the server's words."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from reconcile.cluster import Invalid
from reconcile.cluster.types import Obj, ResourceInfo
from tests.support.backends import Backend
from tests.support.controlplane import CURRENT_RELEASE, OLDEST_RELEASE

pytestmark = pytest.mark.releases(
    CURRENT_RELEASE,
    OLDEST_RELEASE,
    why="status schemas, defaults and strategies differ between releases; --local models each",
)

TEMPLATE = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}
OBJECTS: dict[str, Obj] = {
    "Namespace": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}},
    "Deployment": {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
        },
    },
    "Service": {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s"},
        "spec": {"ports": [{"port": 80}]},
    },
    "Pod": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, **TEMPLATE},
    "PersistentVolumeClaim": {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    },
    "Job": {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {"template": TEMPLATE},
    },
}

# What a controller might write: a field the kind's status lacks, observedGeneration, a
# condition with a field its schema lacks and without its times.
WRITTEN_STATUS = {
    "observedGeneration": 7,
    "kubeflow-pipelines-ready": "True",
    "conditions": [{"type": "Ready", "status": "True", "bogus": 1}],
}
POD_CONDITION = {
    "lastProbeTime": None,
    "lastTransitionTime": None,
    "status": "True",
    "type": "Ready",
}
# The status each kind keeps of WRITTEN_STATUS, then of a write that leaves the status out.
KEPT: dict[str, tuple[Obj, Obj]] = {
    "Namespace": (
        {
            "phase": "Active",
            "conditions": [{"lastTransitionTime": None, "status": "True", "type": "Ready"}],
        },
        {"phase": "Active"},
    ),
    "Deployment": (
        {
            "observedGeneration": 7,
            "conditions": [
                {
                    "lastTransitionTime": None,
                    "lastUpdateTime": None,
                    "status": "True",
                    "type": "Ready",
                }
            ],
        },
        {},
    ),
    "Service": (
        {
            "loadBalancer": {},
            "conditions": [
                {
                    "lastTransitionTime": None,
                    "message": "",
                    "reason": "",
                    "status": "True",
                    "type": "Ready",
                }
            ],
        },
        {"loadBalancer": {}},
    ),
    "PersistentVolumeClaim": (
        {"phase": "Pending", "conditions": [POD_CONDITION]},
        {"phase": "Pending"},
    ),
    "Job": ({"conditions": [POD_CONDITION]}, {}),
}
# 1.20 drops a Pod's observedGeneration (1.34+) and does not keep its qosClass (1.32+).
KEPT_BY_RELEASE: dict[tuple[str, str], tuple[Obj, Obj]] = {
    ("Pod", OLDEST_RELEASE): ({"conditions": [POD_CONDITION]}, {}),
    ("Pod", CURRENT_RELEASE): (
        {"observedGeneration": 7, "qosClass": "BestEffort", "conditions": [POD_CONDITION]},
        {"observedGeneration": 7, "qosClass": "BestEffort"},
    ),
}


def created(backend: Backend, namespace: str, kind: str) -> tuple[ResourceInfo, Obj]:
    obj = copy.deepcopy(OBJECTS[kind])
    if kind == "Namespace":
        obj["metadata"]["name"] = f"{namespace}-x"
    else:
        obj["metadata"]["namespace"] = namespace
    resource = backend.cluster.discover(obj["apiVersion"], obj["kind"])
    return resource, backend.cluster.create(resource, obj)


def labels(obj: Obj) -> dict[str, Any]:
    """The labels a test wrote (not the server's own, which name uids)."""
    found = obj["metadata"].get("labels") or {}
    return {k: v for k, v in found.items() if k in ("written", "a")}


@pytest.mark.parametrize("kind", sorted(OBJECTS))
def test_a_status_write_keeps_what_the_kinds_schema_and_strategy_keep(
    backend: Backend, namespace: str, kube_release: str, kind: str
) -> None:
    resource, stored = created(backend, namespace, kind)
    owner = backend.cluster.get(backend.cluster.discover("v1", "namespaces"), namespace)
    body = copy.deepcopy(stored)
    body["status"] = copy.deepcopy(WRITTEN_STATUS)
    body["metadata"]["labels"] = {**(body["metadata"].get("labels") or {}), "written": "yes"}
    body["metadata"]["annotations"] = {"written": "yes"}
    # beside the server's own (a claim's protection finalizer, which its controller restores)
    held = [*(stored["metadata"].get("finalizers") or []), "example.com/held"]
    body["metadata"]["finalizers"] = held
    body["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "name": namespace,
            "uid": owner["metadata"]["uid"],
        }
    ]
    body["spec"] = {"finalizers": []} if kind == "Namespace" else {**body["spec"], "extra": 1}
    first, without = KEPT.get(kind) or KEPT_BY_RELEASE[(kind, kube_release)]

    written = backend.cluster.update_status(resource, body)

    assert written["status"] == first
    assert written["spec"] == stored["spec"]  # the spec is the stored one
    meta = written["metadata"]
    assert meta.get("generation") == stored["metadata"].get("generation")
    assert (meta.get("annotations"), meta.get("finalizers")) == ({"written": "yes"}, held)
    # a Deployment's status strategy keeps its labels, a Pod's its owner references
    assert labels(written) == (
        labels(stored) if kind == "Deployment" else {**labels(stored), "written": "yes"}
    )
    kept_refs = kind == "Pod"
    assert meta.get("ownerReferences") == (
        None if kept_refs else body["metadata"]["ownerReferences"]
    )
    assert backend.cluster.get(resource, meta["name"], namespace=meta.get("namespace")) == written

    # the same status again changes nothing
    again = backend.cluster.update_status(resource, copy.deepcopy(written))
    assert again["metadata"]["resourceVersion"] == meta["resourceVersion"]

    # a write that leaves the status out gets the kind's defaults back
    body = copy.deepcopy(written)
    del body["status"]
    assert backend.cluster.update_status(resource, body)["status"] == without


GENERATION = {
    # kind: (1.37, 1.20): a Pod has one from 1.33, a Job from 1.21
    "Pod": (1, None),
    "Job": (1, None),
    "Deployment": (1, 1),
    "Service": (None, None),
}


@pytest.mark.parametrize("kind", sorted(GENERATION))
def test_generation_is_set_by_the_kinds_that_have_one(
    backend: Backend, namespace: str, kube_release: str, kind: str
) -> None:
    current, oldest = GENERATION[kind]
    _, stored = created(backend, namespace, kind)
    wanted = current if kube_release == CURRENT_RELEASE else oldest
    assert stored["metadata"].get("generation") == wanted


def test_a_null_status_is_the_kinds_empty_status(backend: Backend, namespace: str) -> None:
    resource, stored = created(backend, namespace, "Service")
    body = dict(copy.deepcopy(stored), status=None)
    assert backend.cluster.update_status(resource, body)["status"] == {"loadBalancer": {}}


def test_status_quantities_are_stored_canonical(backend: Backend, namespace: str) -> None:
    resource, stored = created(backend, namespace, "PersistentVolumeClaim")
    body = dict(copy.deepcopy(stored), status={"capacity": {"storage": "1000m"}})
    written = backend.cluster.update_status(resource, body)
    assert written["status"] == {"capacity": {"storage": "1"}, "phase": "Pending"}


REFUSED = [
    pytest.param(
        "Namespace",
        {"phase": "Terminating"},
        [
            "status.Phase: Invalid value: \"Terminating\": may only be 'Active' if "
            "`deletionTimestamp` is empty"
        ],
        id="namespace-terminating-while-not-deleted",
    ),
    pytest.param(
        "Deployment",
        {"replicas": -1},
        [
            "status.replicas: Invalid value: -1: must be greater than or equal to 0",
            "status.readyReplicas: Invalid value: 0: cannot be greater than status.replicas",
        ],
        id="deployment-negative-replicas",
    ),
    pytest.param(
        "Deployment",
        {"replicas": 1, "readyReplicas": 3},
        ["status.readyReplicas: Invalid value: 3: cannot be greater than status.replicas"],
        id="deployment-more-ready-than-replicas",
    ),
    pytest.param(
        "Job",
        {"succeeded": -1},
        ["status.succeeded: Invalid value: -1: must be greater than or equal to 0"],
        id="job-negative-count",
    ),
]


@pytest.mark.parametrize(("kind", "status", "phrases"), REFUSED)
def test_status_writes_the_kind_refuses(
    backend: Backend, namespace: str, kind: str, status: Obj, phrases: list[str]
) -> None:
    resource, stored = created(backend, namespace, kind)
    with pytest.raises(Invalid) as refused:
        backend.cluster.update_status(resource, dict(copy.deepcopy(stored), status=status))
    for phrase in phrases:
        assert phrase in refused.value.message


def test_status_values_the_schema_allows_are_kept(backend: Backend, namespace: str) -> None:
    """The server checks no `enum` of a status: a Pod's phase is the writer's business."""
    resource, stored = created(backend, namespace, "PersistentVolumeClaim")
    body = dict(copy.deepcopy(stored), status={"phase": "Unheard-of"})
    assert backend.cluster.update_status(resource, body)["status"] == {"phase": "Unheard-of"}
