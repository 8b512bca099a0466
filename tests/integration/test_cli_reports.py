"""Reports, dry-run and exit codes through the command itself, on the real control plane (the
cluster holds the objects, the controller comes from a file) and on the embedded default
(--local). A Secret child carries a distinctive value that must appear in no output."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from reconcile.cli.run import app
from reconcile.report import REPORT_SCHEMA_VERSION
from tests.support.backends import Backend, crd_manifest
from tests.support.cli import reconcile
from tests.support.controlplane import TESTED_USER, ControlPlane
from tests.support.examples import EXAMPLES

SECRET_VALUE = "s3cr3t-" + uuid.uuid4().hex

HOOK = textwrap.dedent(
    f"""
    import json, sys
    request = json.load(sys.stdin)
    name = request["parent"]["metadata"]["name"]
    secret = {{
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {{"name": name + "-credentials", "labels": {{"app": name}}}},
        "stringData": {{"password": "{SECRET_VALUE}"}},
    }}
    json.dump({{"status": {{"secrets": len(request["children"]["Secret.v1"])}},
               "children": [secret]}}, sys.stdout)
    """
)


def write_project(root: Path, group: str, namespace: str) -> Path:
    """A repository-like directory: CRD, namespace, parent and the controller with its hook."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "hook.py").write_text(HOOK)
    documents = [
        crd_manifest(group, "Vault", "vaults"),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        {
            "apiVersion": f"{group}/v1",
            "kind": "Vault",
            "metadata": {"name": "main", "namespace": namespace},
            "spec": {"selector": {"matchLabels": {"app": "main"}}},
        },
    ]
    (root / "objects.yaml").write_text(yaml.safe_dump_all(documents))
    controller = {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "CompositeController",
        "metadata": {"name": f"vault-{namespace}"},
        "spec": {
            "parentResource": {"apiVersion": f"{group}/v1", "resource": "vaults"},
            "childResources": [
                {"apiVersion": "v1", "resource": "secrets", "updateStrategy": {"method": "InPlace"}}
            ],
            "hooks": {"sync": {"command": {"argv": [sys.executable, "hook.py"]}}},
        },
    }
    (root / "controller.yaml").write_text(yaml.safe_dump(controller))
    return root


def check_outputs(texts: list[str], report_json: str) -> dict[str, object]:
    for text in texts:
        assert SECRET_VALUE not in text
    report = json.loads(report_json)
    assert report["schemaVersion"] == REPORT_SCHEMA_VERSION
    return dict(report)


def dry_run_checks(stdout: str, stderr: str, out: Path) -> None:
    report = check_outputs(
        [stdout, stderr, (out / "r.json").read_text(), (out / "r.md").read_text()],
        (out / "r.json").read_text(),
    )
    assert report["dryRun"] is True
    passes: list[dict[str, Any]] = report["passes"]  # type: ignore[assignment]
    actions = [
        (a["action"], a["object"]["kind"], a["state"])
        for c in passes[0]["controllers"]
        for p in c["parents"]
        for a in p["actions"]
    ]
    assert ("create", "Secret", "pending") in actions
    assert "<details>" in (out / "r.md").read_text()
    assert "create Secret" in stdout  # the text report on the terminal


@pytest.mark.controlplane
def test_reports_and_exit_codes_on_the_real_control_plane(
    live_backend: Backend, control_plane: ControlPlane, tmp_path: Path
) -> None:
    namespace = f"t-{uuid.uuid4().hex[:8]}"
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    project = write_project(tmp_path / "repo", group, namespace)
    for document in yaml.safe_load_all((project / "objects.yaml").read_text()):
        resource = live_backend.admin.discover(document["apiVersion"], document["kind"])
        live_backend.admin.create(resource, document)
        if document["kind"] == "CustomResourceDefinition":
            from tests.support.poll import eventually

            eventually(lambda: live_backend.admin.discover(f"{group}/v1", "vaults"))
    base = [
        "--kubeconfig",
        str(control_plane.kubeconfig),
        "--context",
        TESTED_USER,
        "--no-cluster-controllers",
        "--controllers",
        str(project / "controller.yaml"),
        "--max-duration",
        "30",
    ]
    out = tmp_path / "out"
    runner = CliRunner()
    mark = live_backend.mark()
    dry = runner.invoke(
        app,
        [
            *base,
            "--dry-run",
            "--report-file",
            f"json:{out / 'r.json'}",
            "--report-file",
            str(out / "r.md"),
        ],
    )
    assert dry.exit_code == 2, dry.output
    assert live_backend.mutations_since(mark) == {}
    dry_run_checks(dry.stdout, dry.stderr, out)

    applied = runner.invoke(app, [*base, "--report-format", "json"])
    assert applied.exit_code == 0, applied.output
    report = check_outputs([applied.stdout, applied.stderr], applied.stdout)
    assert report["converged"] is True

    again = runner.invoke(app, [*base, "--dry-run"])
    assert again.exit_code == 0, again.output
    secrets = live_backend.admin.discover("v1", "secrets")
    assert live_backend.admin.get(secrets, "main-credentials", namespace=namespace)["data"]

    broken = project / "broken.yaml"
    broken.write_text((project / "controller.yaml").read_text().replace("hook.py", "missing.py"))
    failed = runner.invoke(app, [*base[:-4], "--controllers", str(broken), "--max-duration", "30"])
    assert failed.exit_code == 1
    assert "missing.py" in failed.stderr


def test_reports_and_exit_codes_on_the_embedded_default(tmp_path: Path) -> None:
    project = write_project(tmp_path / "repo", "vault.example.com", "vaults")
    out = tmp_path / "out"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return reconcile(*args, cwd=tmp_path)

    dry = cli(
        "--local",
        str(project),
        "--dry-run",
        "--report-file",
        f"json:{out / 'r.json'}",
        "--report-file",
        str(out / "r.md"),
    )
    assert dry.returncode == 2, dry.stderr
    dry_run_checks(dry.stdout, dry.stderr, out)

    applied = cli(
        "--local", str(project), "--output-dir", str(out / "state"), "--report-format", "json"
    )
    assert applied.returncode == 0, applied.stderr
    report = check_outputs([applied.stdout, applied.stderr], applied.stdout)
    assert report["converged"] is True
    secret = yaml.safe_load(
        (out / "state" / "vaults" / "secrets" / "main-credentials.yaml").read_text()
    )
    assert secret["data"]  # the written state is the object store itself: values are kept there

    again = cli(
        "--local",
        str(out / "state"),
        "-R",
        "--controllers",
        str(project / "controller.yaml"),
        "--dry-run",
    )
    assert again.returncode == 0, again.stderr + again.stdout

    (project / "hook.py").write_text("import sys\nsys.exit('hook is broken')\n")
    failed = cli("--local", str(project))
    assert failed.returncode == 1
    assert "hook is broken" in failed.stderr


def test_each_controller_is_reported_with_its_kind(tmp_path: Path) -> None:
    """A DecoratorController's resync is due as a DecoratorController, not a Composite one."""
    inputs = tmp_path / "examples" / "service-per-pod"
    shutil.copytree(EXAMPLES / "service-per-pod", inputs)
    controllers = list(yaml.safe_load_all((inputs / "controller.yaml").read_text()))
    for controller in controllers:
        controller["spec"]["resyncPeriodSeconds"] = 3600
    (inputs / "controller.yaml").write_text(yaml.safe_dump_all(controllers))
    done = reconcile("--local", str(inputs), "--report-format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    kinds = {c["name"]: c["kind"] for p in report["passes"] for c in p["controllers"]}
    assert set(kinds.values()) == {"DecoratorController"}, kinds
    name = controllers[0]["metadata"]["name"]
    due = report["dueNextRun"][0]
    assert any(f"DecoratorController {c}: resyncPeriodSeconds 3600" in due for c in kinds), due
    text = reconcile("--local", str(inputs), cwd=tmp_path).stdout
    assert f"Controller {name} (DecoratorController)" in text
