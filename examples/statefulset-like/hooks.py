"""CatSet: a StatefulSet-like controller. Pods `<name>-<ordinal>` roll out one at a time
(RollingRecreate, gated on Ready); each Pod gets PersistentVolumeClaims from
`spec.volumeClaimTemplates` (OnDelete: never touched once created). Scaling down removes the
highest ordinals first; the finalize hook scales to zero before the parent goes."""

from __future__ import annotations

import copy
from typing import Any

from hooklib import run  # hooklib.py beside this file


def _ready(pod: dict[str, Any]) -> bool:
    conditions = pod.get("status", {}).get("conditions", [])
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _pods(parent: dict[str, Any], replicas: int) -> list[dict[str, Any]]:
    name, spec = parent["metadata"]["name"], parent.get("spec", {})
    template = spec.get("template", {})
    labels = dict(template.get("metadata", {}).get("labels", {}))
    pods = []
    for ordinal in range(replicas):
        pod_spec = copy.deepcopy(template.get("spec", {}))
        pod_spec["hostname"] = f"{name}-{ordinal}"
        for claim in spec.get("volumeClaimTemplates", []):
            claim_name = claim["metadata"]["name"]
            pod_spec.setdefault("volumes", []).append(
                {
                    "name": claim_name,
                    "persistentVolumeClaim": {"claimName": f"{claim_name}-{name}-{ordinal}"},
                }
            )
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"{name}-{ordinal}", "labels": labels},
                "spec": pod_spec,
            }
        )
    return pods


def _claims(parent: dict[str, Any], replicas: int) -> list[dict[str, Any]]:
    name, spec = parent["metadata"]["name"], parent.get("spec", {})
    labels = dict(spec.get("template", {}).get("metadata", {}).get("labels", {}))
    claims = []
    for ordinal in range(replicas):
        for template in spec.get("volumeClaimTemplates", []):
            claim = copy.deepcopy(template)
            claim["apiVersion"], claim["kind"] = "v1", "PersistentVolumeClaim"
            claim["metadata"] = {
                "name": f"{template['metadata']['name']}-{name}-{ordinal}",
                "labels": labels,
            }
            claims.append(claim)
    return claims


def sync(request: dict[str, Any]) -> dict[str, Any]:
    parent, children = request["parent"], request["children"]
    pods = children["Pod.v1"]
    replicas = int(parent.get("spec", {}).get("replicas", 1))
    status = {
        "replicas": len(pods),
        "readyReplicas": sum(1 for p in pods.values() if _ready(p)),
    }
    # Claims are kept when scaling down (as StatefulSet does); only the Pods go.
    ordinals = [int(n.rsplit("-", 1)[1]) for n in children["PersistentVolumeClaim.v1"]]
    claims = _claims(parent, max([replicas, *(o + 1 for o in ordinals)]))
    return {"status": status, "children": [*_pods(parent, replicas), *claims]}


def finalize(request: dict[str, Any]) -> dict[str, Any]:
    """Scale down one Pod at a time, highest ordinal first; done when none is left."""
    parent, pods = request["parent"], request["children"]["Pod.v1"]
    ordinals = sorted(int(n.rsplit("-", 1)[1]) for n in pods)
    keep = len(ordinals) - 1 if ordinals else 0
    return {
        "status": {"replicas": len(pods), "readyReplicas": 0},
        "children": _pods(parent, keep)[:keep],
        "finalized": not pods,
    }


if __name__ == "__main__":
    run({"sync": sync, "finalize": finalize})
