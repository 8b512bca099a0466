"""A Secret's value copied elsewhere (an annotation, a ConfigMap built from it, a field the
kind's schema drops) is still a Secret's value: no report shows it, in any format."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from tests.support.backends import crd_manifest
from tests.support.cli import reconcile

VALUE = "HUNTER2SECRETVALUEXYZ"
HOOK = f"""
import json, sys
json.load(sys.stdin)
secret = {{"apiVersion": "v1", "kind": "Secret", "metadata": {{"name": "s1",
          "annotations": {{"note": "was {VALUE}"}}, "bogusMeta": "{VALUE}"}},
          "stringData": {{"pw": "{VALUE}"}}}}
copy = {{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {{"name": "copy"}},
        "data": {{"pw": "{VALUE}", "{VALUE}": "as a key"}}}}
print(json.dumps({{"status": {{}}, "children": [secret, copy]}}))
"""


@pytest.mark.parametrize("report", ["text", "markdown", "json"])
def test_a_secret_s_value_elsewhere_is_redacted_everywhere(tmp_path: Path, report: str) -> None:
    (tmp_path / "hook.py").write_text(HOOK)
    crd = crd_manifest("sc.example.com", "Vault", "vaults")
    vault = {
        "apiVersion": "sc.example.com/v1",
        "kind": "Vault",
        "metadata": {"name": "vault-1", "namespace": "default"},
    }
    controller = {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "CompositeController",
        "metadata": {"name": "vaults"},
        "spec": {
            "generateSelector": True,
            "parentResource": {"apiVersion": "sc.example.com/v1", "resource": "vaults"},
            "childResources": [
                {"apiVersion": "v1", "resource": "secrets"},
                {"apiVersion": "v1", "resource": "configmaps"},
            ],
            "hooks": {"sync": {"command": {"argv": [sys.executable, "hook.py"]}}},
        },
    }
    (tmp_path / "all.yaml").write_text(yaml.safe_dump_all([crd, vault, controller]))
    report_file = tmp_path / "report.out"
    done = reconcile(
        "--local",
        str(tmp_path / "all.yaml"),
        "--report-format",
        report,
        "--report-file",
        f"{report}:{report_file}",
        "--verbose",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for shown in (done.stdout, done.stderr, report_file.read_text()):
        assert VALUE not in shown
    assert "bogusMeta" in done.stdout  # the dropped field is named, its value is not
