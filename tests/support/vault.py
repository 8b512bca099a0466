"""The "Vault" scenario: a CompositeController whose parents each choose how its command hook
behaves (tests/support/vault_hook.py), run through the real `python -m reconcile` on either
backend: `--local` (the in-process memory cluster) or the real control plane.

Each scenario has its own CRD group and namespace, so tests never see each other's objects.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from reconcile.cluster.errors import ApiError
from reconcile.cluster.types import Obj
from tests.support.backends import Backend, crd_manifest
from tests.support.cli import command_env, reconcile
from tests.support.controlplane import TESTED_USER
from tests.support.poll import eventually

HOOK = Path(__file__).with_name("vault_hook.py")


@dataclass
class Vault:
    """`backend` is None for `--local`; otherwise the live backend's admin sets things up."""

    directory: Path
    backend: Backend | None
    group: str = field(default_factory=lambda: f"v{uuid.uuid4().hex[:8]}.example.com")
    namespace: str = field(default_factory=lambda: f"vault-{uuid.uuid4().hex[:6]}")
    parents: list[Obj] = field(default_factory=list)

    @property
    def inputs(self) -> Path:
        return self.directory / "inputs"

    @property
    def markers(self) -> Path:
        return self.directory / "markers"

    @property
    def controller_path(self) -> Path:
        return self.inputs / "controller.yaml"

    def parent(self, name: str, behaviour: str = "ok", **spec: Any) -> Obj:
        obj: Obj = {
            "apiVersion": f"{self.group}/v1",
            "kind": "Vault",
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": {"behaviour": behaviour, "marker": str(self.markers), **spec},
        }
        self.parents.append(obj)
        return obj

    def controller(self, name: str = "vault", timeout: str = "60s") -> Obj:
        return {
            "apiVersion": "metacontroller.k8s.io/v1alpha1",
            "kind": "CompositeController",
            "metadata": {"name": f"{name}-{self.group.split('.')[0]}"},
            "spec": {
                "generateSelector": True,
                "parentResource": {"apiVersion": f"{self.group}/v1", "resource": "vaults"},
                "childResources": [
                    {
                        "apiVersion": "v1",
                        "resource": "secrets",
                        "updateStrategy": {"method": "InPlace"},
                    },
                    {
                        "apiVersion": "v1",
                        "resource": "configmaps",
                        "updateStrategy": {"method": "InPlace"},
                    },
                ],
                "hooks": {
                    "sync": {"command": {"argv": [sys.executable, str(HOOK)], "timeout": timeout}}
                },
            },
        }

    def write(self, timeout: str = "60s") -> None:
        """Write the inputs and, on the live backend, create the CRD, namespace and parents."""
        self.inputs.mkdir(parents=True, exist_ok=True)
        self.markers.mkdir(parents=True, exist_ok=True)
        self.controller_path.write_text(yaml.safe_dump(self.controller(timeout=timeout)))
        crd = crd_manifest(self.group, "Vault", "vaults")
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace}}
        if self.backend is None:
            (self.inputs / "crd.yaml").write_text(yaml.safe_dump(crd))
            (self.inputs / "parents.yaml").write_text(
                yaml.safe_dump_all([namespace, *self.parents])
            )
            return
        admin = self.backend.admin
        admin.create(admin.discover("apiextensions.k8s.io/v1", "customresourcedefinitions"), crd)
        vaults = eventually(
            lambda: admin.discover(f"{self.group}/v1", "vaults"), what="the Vault CRD"
        )
        admin.create(admin.discover("v1", "namespaces"), namespace)
        for parent in self.parents:
            admin.create(vaults, parent)

    def args(self, *extra: str) -> list[str]:
        if self.backend is None:
            return ["--local", str(self.inputs), *extra]
        assert self.backend.plane is not None
        return [
            "--kubeconfig",
            str(self.backend.plane.kubeconfig),
            "--context",
            TESTED_USER,
            "--no-cluster-controllers",
            "--controllers",
            str(self.controller_path),
            *extra,
        ]

    def run(self, *extra: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return reconcile(*self.args(*extra), cwd=self.directory, timeout=timeout)

    def start(self, *extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "reconcile", *self.args(*extra)],
            cwd=self.directory,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=command_env(),
        )

    def events(self, output_dir: Path | None = None) -> list[Obj]:
        """The Events recorded in the scenario's namespace (from `output_dir` on --local)."""
        if self.backend is None:
            assert output_dir is not None
            folder = output_dir / self.namespace / "events"
            return [yaml.safe_load(p.read_text()) for p in sorted(folder.glob("*.yaml"))]
        events = self.backend.admin.discover("v1", "events")
        return self.backend.admin.list(events, namespace=self.namespace).items

    def cleanup(self) -> None:
        if self.backend is None:
            return
        admin = self.backend.admin
        with contextlib.suppress(ApiError):
            admin.delete(admin.discover("v1", "namespaces"), self.namespace)
        with contextlib.suppress(ApiError):
            admin.delete(
                admin.discover("apiextensions.k8s.io/v1", "customresourcedefinitions"),
                f"vaults.{self.group}",
            )


@contextlib.contextmanager
def vault_scenario(directory: Path, backend: Backend | None) -> Iterator[Vault]:
    scenario = Vault(directory, backend)
    try:
        yield scenario
    finally:
        scenario.cleanup()
