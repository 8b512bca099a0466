"""A controller's child that breaks its CRD's schema, in `--local`: refused as a cluster
refuses it, the error naming the child, the field and the API server's message; the other
parents' children are written."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tests.support.cli import reconcile

FLEETS_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: fleets.sea.example.com}
spec:
  group: sea.example.com
  scope: Namespaced
  names: {plural: fleets, singular: fleet, kind: Fleet}
  versions:
    - name: v1
      served: true
      storage: true
      subresources: {status: {}}
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
---
"""

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
              properties:
                replicas: {type: integer, maximum: 5, multipleOf: 2}
                berth:
                  type: object
                  properties:
                    north: {type: string}
                    south: {type: string}
                  oneOf: [{required: [north]}, {required: [south]}]
"""

CRDS = FLEETS_CRD + SHIPS_CRD

CONTROLLER = """\
apiVersion: metacontroller.k8s.io/v1alpha1
kind: CompositeController
metadata: {name: fleet}
spec:
  generateSelector: true
  parentResource: {apiVersion: sea.example.com/v1, resource: fleets}
  childResources: [{apiVersion: sea.example.com/v1, resource: ships}]
  hooks:
    sync:
      command: {argv: [python3, hook.py], timeout: 10s}
"""

HOOK = """\
import json, sys
request = json.load(sys.stdin)
parent = request["parent"]
ship = {"apiVersion": "sea.example.com/v1", "kind": "Ship",
        "metadata": {"name": parent["metadata"]["name"]}, "spec": parent["spec"]}
json.dump({"status": {}, "children": [ship]}, sys.stdout)
"""


def fleet(name: str, spec: dict[str, object]) -> str:
    body = {
        "apiVersion": "sea.example.com/v1",
        "kind": "Fleet",
        "metadata": {"name": name, "namespace": "sea"},
        "spec": spec,
    }
    return "---\n" + json.dumps(body) + "\n"


def test_a_child_that_breaks_its_crd_is_an_error_naming_it(tmp_path: Path) -> None:
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / "crds.yaml").write_text(CRDS)
    (inputs / "controller.yaml").write_text(CONTROLLER)
    (inputs / "hook.py").write_text(textwrap.dedent(HOOK))
    (inputs / "fleets.yaml").write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: sea}\n"
        + fleet("fine", {"replicas": 4, "berth": {"north": "n1"}})
        + fleet("too-many", {"replicas": 9})
        + fleet("odd", {"replicas": 3})
        + fleet("both-berths", {"berth": {"north": "n1", "south": "s1"}})
    )
    out = tmp_path / "out"
    done = reconcile(
        "--local", str(inputs), "--output-dir", str(out), "--report-format", "json",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-3000:]
    errors = json.loads(done.stdout)["errors"]
    expected = {
        "too-many": "spec.replicas: Invalid value: 9: spec.replicas in body should be less "
        "than or equal to 5",
        "odd": "spec.replicas: Invalid value: 3: spec.replicas in body should be a multiple of 2",
        "both-berths": '"spec.berth" must validate one and only one schema (oneOf).',
    }
    for name, message in expected.items():
        assert any(f"Ship sea/{name}" in e and message in e for e in errors), (name, errors)
    assert (out / "sea" / "ships.sea.example.com" / "fine.yaml").is_file()
    for name in expected:
        assert not (out / "sea" / "ships.sea.example.com" / f"{name}.yaml").exists()
