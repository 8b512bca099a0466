"""A controller's child that breaks its CRD's CEL rule (`x-kubernetes-validations`), in
`--local`: refused as a cluster refuses it, the error naming the child, the field and the rule's
message; the other parents' children are written."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tests.integration.test_local_crd_validation import CONTROLLER, FLEETS_CRD, HOOK, fleet
from tests.support.cli import reconcile

SHIPS_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ships.sea.example.com}
spec:
  group: sea.example.com
  scope: Namespaced
  names: {plural: ships, singular: ship, kind: Ship}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              x-kubernetes-validations:
                - rule: self.minCrew <= self.maxCrew
                  message: minCrew must be <= maxCrew
              properties:
                minCrew: {type: integer}
                maxCrew: {type: integer}
                name:
                  type: string
                  x-kubernetes-validations:
                    - rule: self.matches('^[a-z]+$')
                      messageExpression: "'name ' + self + ' is not lower case'"
"""

CRDS = FLEETS_CRD + SHIPS_CRD


def test_a_child_that_breaks_a_cel_rule_is_an_error_naming_it(tmp_path: Path) -> None:
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / "crds.yaml").write_text(CRDS)
    (inputs / "controller.yaml").write_text(CONTROLLER)
    (inputs / "hook.py").write_text(textwrap.dedent(HOOK))
    (inputs / "fleets.yaml").write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: sea}\n"
        + fleet("fine", {"minCrew": 2, "maxCrew": 5, "name": "ok"})
        + fleet("crowded", {"minCrew": 9, "maxCrew": 5})
        + fleet("shouty", {"minCrew": 1, "maxCrew": 2, "name": "LOUD"})
    )
    out = tmp_path / "out"
    done = reconcile(
        "--local", str(inputs), "--output-dir", str(out), "--report-format", "json",
        "--kubernetes-version", "1.34", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-3000:]
    errors = json.loads(done.stdout)["errors"]
    expected = {
        "crowded": 'spec: Invalid value: "object": minCrew must be <= maxCrew',
        "shouty": 'spec.name: Invalid value: "string": name LOUD is not lower case',
    }
    for name, message in expected.items():
        assert any(f"Ship sea/{name}" in e and message in e for e in errors), (name, errors)
    assert (out / "sea" / "ships.sea.example.com" / "fine.yaml").is_file()
    for name in expected:
        assert not (out / "sea" / "ships.sea.example.com" / f"{name}.yaml").exists()


def test_on_the_test_control_planes_release_rules_have_no_effect(tmp_path: Path) -> None:
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / "crds.yaml").write_text(CRDS)
    (inputs / "controller.yaml").write_text(CONTROLLER)
    (inputs / "hook.py").write_text(textwrap.dedent(HOOK))
    (inputs / "fleets.yaml").write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: sea}\n"
        + fleet("crowded", {"minCrew": 9, "maxCrew": 5})
    )
    out = tmp_path / "out"
    done = reconcile(
        "--local", str(inputs), "--output-dir", str(out), "--report-format", "json",
        "--kubernetes-version", "1.20", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (out / "sea" / "ships.sea.example.com" / "crowded.yaml").is_file()
