"""Children of every built-in kind controllers create, written the way people write them
(quantities like `0.5`, `false` and empty values, fields left to server defaults): the second
run sends no write at all, counted by the API server's audit log on the real control plane."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from reconcile.cluster.types import ResourceInfo
from tests.support.backends import Backend
from tests.support.controllers import composite, run, webhook, write_controllers
from tests.support.hookserver import serve
from tests.unit.test_apply_semantic import (
    CONFIGMAP_WRITTEN,
    DEPLOYMENT_WRITTEN,
    POD_WRITTEN,
    PVC_WRITTEN,
    STATEFULSET_WRITTEN,
)

LABELS = {"app": "zoo"}
SERVICE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "web"},
    "spec": {
        "selector": {"app": "web"},
        "ports": [
            {"name": "http", "port": 80, "targetPort": 8080},
            {"name": "dns", "port": 53, "protocol": "UDP"},
        ],
    },
}
JOB: dict[str, Any] = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "once"},
    "spec": {
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "once", "image": "busybox", "command": ["echo", "hi"]}],
            }
        }
    },
}
SECRET: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "creds"},
    "type": "Opaque",
    "stringData": {"password": "zoo-password"},
}
KINDS = [
    ("v1", "pods"),
    ("v1", "services"),
    ("apps/v1", "deployments"),
    ("apps/v1", "statefulsets"),
    ("batch/v1", "jobs"),
    ("v1", "persistentvolumeclaims"),
    ("v1", "configmaps"),
    ("v1", "secrets"),
]


def zoo() -> list[dict[str, Any]]:
    children = []
    for written in (
        POD_WRITTEN,
        SERVICE,
        DEPLOYMENT_WRITTEN,
        STATEFULSET_WRITTEN,
        JOB,
        PVC_WRITTEN,
        CONFIGMAP_WRITTEN,
        SECRET,
    ):
        child = copy.deepcopy(written)
        child["metadata"].pop("namespace", None)
        child["metadata"]["labels"] = {**(child["metadata"].get("labels") or {}), **LABELS}
        children.append(child)
    return children


@pytest.mark.parametrize("strategy", ["client-side", "server-side"])
def test_the_zoo_converges_to_zero_writes(
    backend: Backend, namespace: str, tmp_path: Path, strategy: str
) -> None:
    server_side = strategy == "server-side"
    zoos: ResourceInfo = backend.apply_crd("Zoo")
    backend.admin.create(
        zoos,
        {
            "apiVersion": zoos.api_version,
            "kind": "Zoo",
            "metadata": {"name": "z", "namespace": namespace},
            "spec": {"selector": {"matchLabels": LABELS}},
        },
    )
    with serve(lambda request: {"status": {"children": 8}, "children": zoo()}) as server:
        controller = composite(
            "zoo",
            zoos,
            [(a, r, "InPlace") for a, r in KINDS],
            {"sync": webhook(server.url)},
        )
        path = write_controllers(tmp_path, controller)
        first = run(backend, path, server_side_apply=server_side)
        assert first.errors == [], first.errors
        assert first.converged
        mark = backend.mark()
        second = run(backend, path, server_side_apply=server_side)
        assert second.errors == [] and second.converged
        assert backend.mutations_since(mark) == {}
        assert len(second.passes) == 1
