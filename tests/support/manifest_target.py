"""Where a `--manifests` test runs the real command: `--local` state directories for the
in-process cluster (each run's --output-dir is the next run's state) or the real API server;
`target` is the fixture giving both."""

from __future__ import annotations

import contextlib
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile.cluster.errors import AlreadyExists, ApiError
from tests.support.backends import Backend
from tests.support.cli import reconcile
from tests.support.controlplane import TESTED_USER
from tests.support.poll import eventually

Key = tuple[str, str, str]  # kind, namespace, name


@dataclass
class Target:
    """Where the command runs: `--local` state directories (each run's --output-dir is the next
    run's state) or the real API server."""

    directory: Path
    suffix: str
    backend: Backend | None = None
    state: Path = field(init=False)
    runs: int = 0

    def __post_init__(self) -> None:
        self.state = self.directory / "state-0"
        self.state.mkdir(parents=True)
        (self.state / ".keep").write_text("")

    @property
    def namespace(self) -> str:
        return f"ps-{self.suffix}"

    @property
    def applyset(self) -> str:
        return f"{self.namespace}/set"

    def seed(self, *objects: dict[str, Any]) -> None:
        """Objects that exist before the command runs (someone else's, or an earlier run's)."""
        if self.backend is None:
            with (self.state / f"seed-{uuid.uuid4().hex[:6]}.yaml").open("w") as out:
                yaml.safe_dump_all(objects, out)
            return
        admin = self.backend.admin
        for obj in objects:
            resource = eventually(
                lambda o=obj: admin.discover(o["apiVersion"], o["kind"]),  # type: ignore[misc]
                what=f"{obj['kind']} to be served",
            )
            with contextlib.suppress(AlreadyExists):  # the cluster may have made it already
                admin.create(resource, obj)

    def run(self, manifests: Path, *extra: str) -> subprocess.CompletedProcess[str]:
        self.runs += 1
        args = ["--manifests", str(manifests), "--applyset", self.applyset, *extra]
        args += ["--no-cluster-controllers", "--report-format", "json", "--max-duration", "60"]
        if self.backend is None:
            out = self.directory / f"state-{self.runs}"
            done = reconcile(
                "--local",
                str(self.state),
                "-R",
                "--output-dir",
                str(out),
                *args,
                cwd=self.directory,
            )
            if out.is_dir() and any(p.name != ".reconcile-output" for p in out.iterdir()):
                self.state = out  # the run wrote its cluster
            return done
        assert self.backend.plane is not None
        kubeconfig = str(self.backend.plane.kubeconfig)
        return reconcile(
            "--kubeconfig", kubeconfig, "--context", TESTED_USER, *args, cwd=self.directory
        )

    def objects(self) -> set[Key]:
        """What exists in the test's namespace and of its CRD group, cluster-scoped included."""
        found: set[Key] = set()
        if self.backend is None:
            for file in self.state.rglob("*.yaml"):
                for obj in yaml.safe_load_all(file.read_text()):
                    if isinstance(obj, dict):
                        found.add(_key(obj))
        else:
            admin = self.backend.admin
            for api_version, plural in (
                ("v1", "configmaps"),
                ("v1", "secrets"),
                ("v1", "services"),
                ("v1", "namespaces"),
                ("apiextensions.k8s.io/v1", "customresourcedefinitions"),
            ):
                resource = admin.discover(api_version, plural)
                for listed in admin.list(resource).items:
                    if not listed["metadata"].get("deletionTimestamp"):
                        found.add(_key({**listed, "kind": resource.kind}))
            with contextlib.suppress(ApiError):
                widgets = admin.discover(f"{self.group}/v1", "widgets")
                found |= {_key({**o, "kind": "Widget"}) for o in admin.list(widgets).items}
        return {k for k in found if self.suffix in k[1] + k[2]}

    @property
    def group(self) -> str:
        return f"ps{self.suffix}.example.com"


def _key(obj: dict[str, Any]) -> Key:
    meta = obj.get("metadata") or {}
    return str(obj.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name"))


def make_target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Target]:
    """The body of a `target` fixture parametrized by backend name."""
    backend = request.getfixturevalue("live_backend") if request.param == "live" else None
    made = Target(tmp_path, uuid.uuid4().hex[:8], backend)
    made.seed({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": made.namespace}})
    # Nothing is deleted afterwards: the names are the test's own and the real control plane
    # is discarded at the session's end (see the `namespace` fixture for why that matters).
    yield made
