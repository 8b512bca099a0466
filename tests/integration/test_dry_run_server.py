"""`--dry-run=server` on both backends: every write the run decides is sent as a dry run
(`dryRun=All`), so the API server refuses what it would refuse (a child over its CRD's
`maximum`) by name and exit 1 where `--dry-run` reports a pending create, accepted writes are
reported as server-validated and pending (exit 2), and nothing is persisted. On the real API
server the audit log shows every mutating request of the run carrying `dryRun=All`."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile.cluster.errors import NotFound
from reconcile.cluster.types import Obj
from tests.support.backends import Backend, crd_manifest
from tests.support.cli import reconcile
from tests.support.controllers import run
from tests.support.controlplane import CURRENT_RELEASE, OLDEST_RELEASE, TESTED_USER
from tests.support.poll import eventually

pytestmark = pytest.mark.releases(
    CURRENT_RELEASE,
    OLDEST_RELEASE,
    why="server-side dry run and the refusals it reports differ between 1.20 and later releases",
)

HOOK = textwrap.dedent(
    """
    import json, sys
    request = json.load(sys.stdin)
    parent = request["parent"]
    part = {
        "apiVersion": parent["apiVersion"],
        "kind": "Part",
        "metadata": {"name": parent["metadata"]["name"]},
        "spec": {"size": parent["spec"]["size"]},
    }
    parts = request["children"]["Part." + parent["apiVersion"]]
    json.dump({"status": {"parts": len(parts)}, "children": [part]}, sys.stdout)
    """
)
MUTATING = ("create", "update", "patch", "delete")


def parts_crd(group: str) -> Obj:
    """Parts, whose spec.size is at most 10."""
    crd = crd_manifest(group, "Part", "parts", status=False)
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {"size": {"type": "integer", "maximum": 10}}}
        },
    }
    return crd


@dataclass
class Project:
    """Gadgets whose sync hook makes one Part of the Gadget's size, run by the real command:
    on the real API server (objects created by the admin) or `--local` (objects in `state`,
    each run's result written to a fresh --output-dir)."""

    root: Path
    backend: Backend
    suffix: str
    runs: int = 0

    @property
    def group(self) -> str:
        return f"ds{self.suffix}.example.com"

    @property
    def namespace(self) -> str:
        return f"ds-{self.suffix}"

    def setup(self) -> None:
        (self.root / "state").mkdir(parents=True)
        (self.root / "hook.py").write_text(HOOK)
        controller = {
            "apiVersion": "metacontroller.k8s.io/v1alpha1",
            "kind": "CompositeController",
            "metadata": {"name": f"gadgets-{self.suffix}"},
            "spec": {
                "generateSelector": True,
                "parentResource": {"apiVersion": f"{self.group}/v1", "resource": "gadgets"},
                "childResources": [
                    {
                        "apiVersion": f"{self.group}/v1",
                        "resource": "parts",
                        "updateStrategy": {"method": "InPlace"},
                    }
                ],
                "hooks": {"sync": {"command": {"argv": [sys.executable, "hook.py"]}}},
            },
        }
        (self.root / "controller.yaml").write_text(yaml.safe_dump(controller))
        self.add(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace}},
            crd_manifest(self.group, "Gadget", "gadgets"),
            parts_crd(self.group),
        )

    def gadget(self, name: str, size: int) -> Obj:
        return {
            "apiVersion": f"{self.group}/v1",
            "kind": "Gadget",
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": {"size": size},
        }

    def add(self, *objects: Obj) -> None:
        if self.backend.plane is None:
            path = self.root / "state" / f"{uuid.uuid4().hex[:6]}.yaml"
            path.write_text(yaml.safe_dump_all(objects))
            return
        admin = self.backend.admin
        for obj in objects:
            resource = eventually(
                lambda o=obj: admin.discover(o["apiVersion"], o["kind"]),  # type: ignore[misc]
                what=f"{obj['kind']} to be served",
            )
            admin.create(resource, obj)

    def run(self, *extra: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
        """The command with `extra` options; its exit and JSON report."""
        self.runs += 1
        args = [
            "--controllers",
            str(self.root / "controller.yaml"),
            "--no-cluster-controllers",
            "--report-format",
            "json",
            "--max-duration",
            "60",
            *extra,
        ]
        if self.backend.plane is None:
            args = ["--local", str(self.root / "state"), "--output-dir", str(self.out), *args]
        else:
            kubeconfig = str(self.backend.plane.kubeconfig)
            args = ["--kubeconfig", kubeconfig, "--context", TESTED_USER, *args]
        done = reconcile(*args, cwd=self.root)
        assert "Traceback" not in done.stderr, done.stderr[-3000:]
        return done, json.loads(done.stdout)

    @property
    def out(self) -> Path:
        return self.root / f"out-{self.runs}"

    def stored(self) -> tuple[list[Obj], list[Obj]]:
        """(Gadgets, Parts) as the cluster holds them after the last run."""
        if self.backend.plane is None:
            found = [yaml.safe_load(p.read_text()) for p in self.out.rglob("*.yaml")]
            return (
                [o for o in found if o["kind"] == "Gadget"],
                [o for o in found if o["kind"] == "Part"],
            )
        admin = self.backend.admin
        gadgets = admin.discover(f"{self.group}/v1", "gadgets")
        parts = admin.discover(f"{self.group}/v1", "parts")
        return (
            admin.list(gadgets, namespace=self.namespace).items,
            admin.list(parts, namespace=self.namespace).items,
        )


@pytest.fixture
def project(backend: Backend, tmp_path: Path) -> Iterator[Project]:
    made = Project(tmp_path, backend, uuid.uuid4().hex[:8])
    made.setup()
    yield made
    if backend.plane is not None:
        backend.delete_quietly(backend.admin.discover("v1", "namespaces"), made.namespace, None)


def actions(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """The report's actions by (action, `Kind namespace/name`)."""
    out = {}
    for controller in report["passes"][0]["controllers"]:
        for parent in controller["parents"]:
            for action in parent["actions"]:
                obj = action["object"]
                out[(action["action"], f"{obj['kind']} {obj['namespace']}/{obj['name']}")] = action
    return out


def audited(backend: Backend, since: int) -> list[str]:
    """The requestURI of every mutating request the command sent since `since` (live)."""
    assert backend.plane is not None
    events = backend.plane.audit_events()[since:]
    return [str(e["requestURI"]) for e in events if e["verb"] in MUTATING]


def test_the_server_refuses_by_name_what_a_client_dry_run_calls_pending(
    project: Project, backend: Backend
) -> None:
    ns = project.namespace
    project.add(project.gadget("fits", 5))
    since = len(backend.plane.audit_events()) if backend.plane is not None else 0

    done, report = project.run("--dry-run=server")
    assert done.returncode == 2, done.stderr[-3000:]  # pending, as with --dry-run
    assert report["dryRun"] is True and report["dryRunMode"] == "server"
    found = actions(report)
    assert found[("create", f"Part {ns}/fits")]["serverValidated"] is True
    assert found[("status", f"Gadget {ns}/fits")]["serverValidated"] is True
    assert {a["state"] for a in found.values()} == {"pending"}
    gadgets, parts = project.stored()
    assert parts == [] and [g.get("status") for g in gadgets] == [None]  # nothing persisted

    project.add(project.gadget("too-big", 11))
    client, client_report = project.run("--dry-run")
    assert client.returncode == 2, client.stderr[-3000:]
    assert client_report["dryRunMode"] == "client"
    pending = actions(client_report)[("create", f"Part {ns}/too-big")]
    assert (pending["state"], pending["serverValidated"]) == ("pending", False)

    for strategy in ("client-side", "server-side"):
        text = project.root / f"report-{strategy}.txt"
        refused, refused_report = project.run(
            "--dry-run=server", "--apply-strategy", strategy, "--report-file", f"text:{text}"
        )
        assert refused.returncode == 1, refused.stderr[-3000:]
        [error] = refused_report["errors"]
        assert f"Part {ns}/too-big" in error, error
        assert "spec.size" in error and "less than or equal to 10" in error, error
        found = actions(refused_report)
        assert found[("create", f"Part {ns}/too-big")]["state"] == "failed"
        assert found[("create", f"Part {ns}/fits")]["serverValidated"] is True
        assert "[pending, server-validated]" in text.read_text()
        gadgets, parts = project.stored()
        assert parts == [] and all(g.get("status") is None for g in gadgets)

    if backend.plane is not None:
        uris = audited(backend, since)
        assert len(uris) >= 6, uris  # the status writes and creates of three server dry runs
        assert [u for u in uris if "dryRun=All" not in u] == []


def test_manifests_and_their_prune_are_sent_as_dry_runs(backend: Backend, tmp_path: Path) -> None:
    suffix = uuid.uuid4().hex[:8]
    ns, new_ns, applyset = f"dm-{suffix}", f"dm-{suffix}-new", f"default/dm-{suffix}"
    configmaps = backend.admin.discover("v1", "configmaps")

    def configmap(name: str, namespace: str, level: str) -> Obj:
        meta = {"name": name, "namespace": namespace}
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"l": level}}

    def manifests(*objects: Obj) -> Path:
        (tmp_path / "apps.yaml").write_text(yaml.safe_dump_all(objects))
        return tmp_path / "apps.yaml"

    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
    first = manifests(namespace, configmap("kept", ns, "1"), configmap("dropped", ns, "1"))
    assert run(backend, apply_paths=(str(first),), applyset=applyset).errors == []
    changed = manifests(
        namespace,
        configmap("kept", ns, "2"),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": new_ns}},
        configmap("new", new_ns, "1"),
    )
    since = len(backend.plane.audit_events()) if backend.plane is not None else 0
    try:
        dry = run(
            backend,
            apply_paths=(str(changed),),
            applyset=applyset,
            prune=True,
            dry_run=True,
            server_dry_run=True,
        )
        assert dry.errors == [], dry.errors
        results = {
            (a.action.kind.value, a.action.namespace, a.action.name): a
            for p in dry.passes[0].parents()
            for a in p.actions
        }
        for key in (
            ("update", ns, "kept"),
            ("delete", ns, "dropped"),
            ("create", "", new_ns),
        ):
            assert results[key].validated and not results[key].applied, key
        # the server cannot check a create in a namespace that exists only on paper
        unchecked = results[("create", new_ns, "new")]
        assert not unchecked.validated and not unchecked.error
        assert unchecked.not_validated == f"its namespace {new_ns} is created by this dry run only"
        assert dry.passes[0].pending == len(results)  # a dry run's exit 2
        assert backend.admin.get(configmaps, "kept", namespace=ns)["data"] == {"l": "1"}
        backend.admin.get(configmaps, "dropped", namespace=ns)  # not pruned
        with pytest.raises(NotFound):
            backend.admin.get(backend.admin.discover("v1", "namespaces"), new_ns)
        if backend.plane is not None:
            uris = audited(backend, since)
            assert any("/configmaps/dropped" in u for u in uris), uris
            assert [u for u in uris if "dryRun=All" not in u] == []
    finally:
        if backend.plane is not None:
            backend.delete_quietly(backend.admin.discover("v1", "namespaces"), ns, None)


def test_every_write_the_server_refuses_is_an_error_of_the_run(
    project: Project, backend: Backend
) -> None:
    """A server dry run sends every write, so several may be refused: each one is an error of
    the run (the summary, the exit and the Action's annotations read the errors), for the
    controllers' children and for `--manifests` objects alike, never only the first."""
    ns = project.namespace
    project.add(project.gadget("big", 11), project.gadget("bigger", 12))
    parts = [
        {
            "apiVersion": f"{project.group}/v1",
            "kind": "Part",
            "metadata": {"name": f"loose-{size}", "namespace": ns},
            "spec": {"size": size},
        }
        for size in (20, 30)
    ]
    manifests = project.root / "parts.yaml"
    manifests.write_text(yaml.safe_dump_all(parts))
    done, report = project.run(
        "--dry-run=server", "--manifests", str(manifests), "--applyset", f"{ns}/parts"
    )
    assert done.returncode == 1, done.stderr[-3000:]
    refused = [e for e in report["errors"] if "less than or equal to 10" in e]
    for name in ("big", "bigger", "loose-20", "loose-30"):
        assert [e for e in refused if f"Part {ns}/{name}:" in e], (name, report["errors"])
    assert len(refused) == 4, report["errors"]
    assert report["summary"]["errors"] == len(report["errors"])
    found = actions(report)
    assert {found[("create", f"Part {ns}/{n}")]["state"] for n in ("loose-20", "loose-30")} == {
        "failed"
    }
