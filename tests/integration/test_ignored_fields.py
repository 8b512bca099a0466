"""A controller carrying a field Metacontroller's decoder ignores (`spec.clientConfig`, an old
field still in kubeflow/manifests) runs, with a warning naming the field in the run's warnings,
its log and the command's report; a near miss of a field that is read (`spec.childResource`) is
refused naming the field meant, and nothing is written."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile.cluster.types import Obj, ResourceInfo
from reconcile.specs.fields import IGNORED
from tests.support.backends import Backend
from tests.support.cli import reconcile
from tests.support.controllers import composite, run, webhook, write_controllers
from tests.support.hookserver import serve

CLIENT_CONFIG = {"service": {"name": "profile-controller", "namespace": "kubeflow"}}


def parent(widgets: ResourceInfo, namespace: str) -> Obj:
    return {
        "apiVersion": widgets.api_version,
        "kind": widgets.kind,
        "metadata": {"name": "team-a", "namespace": namespace},
        "spec": {},
    }


def sync(request: dict[str, Any]) -> dict[str, Any]:
    name = request["parent"]["metadata"]["name"]
    child = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-settings"}}
    return {"children": [{**child, "data": {"team": name}}]}


def test_a_field_metacontroller_ignores_runs_with_a_warning_naming_it(
    backend: Backend,
    namespace: str,
    widgets: ResourceInfo,
    cms: ResourceInfo,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    backend.admin.create(widgets, parent(widgets, namespace))
    with serve(sync) as hook:
        controller = composite(
            f"profiles-{namespace}",
            widgets,
            [("v1", "configmaps", "InPlace")],
            {"sync": webhook(hook.url)},
            clientConfig=CLIENT_CONFIG,
            generateSelector=True,
        )
        path = write_controllers(tmp_path, controller)
        with caplog.at_level(logging.WARNING):
            result = run(backend, path)
    assert result.errors == [] and result.converged, result.errors
    child = backend.admin.get(cms, "team-a-settings", namespace=namespace)
    assert child["data"] == {"team": "team-a"}
    named = [w for w in result.warnings if "spec.clientConfig" in w]
    assert named == [
        f"CompositeController profiles-{namespace} ({path} (document 1)): "
        f"spec.clientConfig: {IGNORED}"
    ]
    assert named[0] in caplog.text


def test_a_near_miss_of_a_field_is_refused_naming_the_field_meant(
    backend: Backend, namespace: str, widgets: ResourceInfo, tmp_path: Path
) -> None:
    backend.admin.create(widgets, parent(widgets, namespace))
    with serve(sync) as hook:
        controller = composite(
            f"profiles-{namespace}",
            widgets,
            [("v1", "configmaps", "InPlace")],
            {"sync": webhook(hook.url)},
            clientConfig=CLIENT_CONFIG,
        )
        controller["spec"]["childResource"] = controller["spec"].pop("childResources")
        mark = backend.mark()
        result = run(backend, write_controllers(tmp_path, controller))
        assert hook.requests == []
    assert backend.mutations_since(mark) == {}
    assert len(result.load_errors) == 1, result.load_errors
    assert result.load_errors[0].endswith(
        "spec.childResource: unknown field: did you mean spec.childResources?"
    )


def test_the_command_names_the_ignored_field_on_stderr_and_in_its_report(tmp_path: Path) -> None:
    """`--local`: the in-process cluster, the hook a local command."""
    hook = tmp_path / "sync.py"
    hook.write_text(
        "import json, sys\n"
        "json.load(sys.stdin)\n"
        'print(json.dumps({"children": [{"apiVersion": "v1", "kind": "ConfigMap", '
        '"metadata": {"name": "settings", "namespace": "team-a"}, "data": {"a": "b"}}]}))\n'
    )
    controller = {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "CompositeController",
        "metadata": {"name": "profiles"},
        "spec": {
            "generateSelector": True,
            "parentResource": {
                "apiVersion": "v1",
                "resource": "namespaces",
                "labelSelector": {"matchLabels": {"team": "a"}},
            },
            "childResources": [{"apiVersion": "v1", "resource": "configmaps"}],
            "clientConfig": CLIENT_CONFIG,
            "hooks": {"sync": {"command": {"argv": ["python3", "sync.py"]}}},
        },
    }
    team = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "team-a", "labels": {"team": "a"}},
    }
    (tmp_path / "all.yaml").write_text(yaml.safe_dump_all([controller, team]))
    done = reconcile("--local", str(tmp_path / "all.yaml"), "--report-format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "spec.clientConfig: unknown field, ignored" in done.stderr
    report = yaml.safe_load(done.stdout)
    assert any("spec.clientConfig" in w for w in report["warnings"]), report["warnings"]
