"""kubectl as an operator runs it against the test control plane: kustomizations rendered,
objects applied, and a ServiceAccount's own credential (a token from the TokenRequest API,
`kubectl create token`) in a kubeconfig of its own."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import yaml

from reconcile.cluster.errors import NotFound
from tests.support.backends import Backend
from tests.support.controlplane import ADMIN_USER, ControlPlane

Obj = dict[str, Any]


def kustomize(directory: Path) -> list[Obj]:
    """The objects `kubectl kustomize DIRECTORY` renders."""
    done = subprocess.run(
        ["kubectl", "kustomize", str(directory)], capture_output=True, text=True, check=True
    )
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def one(objects: list[Obj], kind: str, name: str | None = None) -> Obj:
    """The single object of the kind (and name)."""
    (found,) = [
        o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)
    ]
    return found


def kubectl(plane: ControlPlane, *args: str, user: str = ADMIN_USER, stdin: str = "") -> str:
    """kubectl as `user` (a context of the control plane's kubeconfig); its output, or an
    AssertionError with its standard error."""
    done = subprocess.run(
        ["kubectl", "--kubeconfig", str(plane.kubeconfig), "--context", user, *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)}: {done.stderr}")
    return done.stdout


def service_account_kubeconfig(
    plane: ControlPlane, path: Path, name: str = "reconcile", namespace: str = "reconcile"
) -> Path:
    """A kubeconfig at `path` holding nothing but a token of the ServiceAccount (TokenRequest)."""
    token = kubectl(plane, "create", "token", name, "-n", namespace).strip()
    config = json.loads(plane.kubeconfig.read_text())
    config["users"] = [{"name": f"{name}-sa", "user": {"token": token}}]
    config["contexts"] = [{"name": "sa", "context": {"cluster": "test", "user": f"{name}-sa"}}]
    config["current-context"] = "sa"
    path.write_text(json.dumps(config))
    return path


def aggregated_rules(backend: Backend, name: str) -> list[Obj]:
    """The rules of a ClusterRole; AssertionError while it has none (an aggregated role before
    the aggregation controller fills it), for `eventually`."""
    roles = backend.admin.discover("rbac.authorization.k8s.io/v1", "clusterroles")
    try:
        rules: list[Obj] = backend.admin.get(roles, name).get("rules") or []
    except NotFound:
        rules = []
    if not rules:
        raise AssertionError(f"ClusterRole {name} has no rules yet")
    return rules
