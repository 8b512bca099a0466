"""IndexedJob: runs `spec.completions` Pods, one per index, each with its index in the
environment (JOB_INDEX), and counts how many succeeded."""

from __future__ import annotations

import copy
from typing import Any

from hooklib import run  # hooklib.py beside this file


def sync(request: dict[str, Any]) -> dict[str, Any]:
    parent, pods = request["parent"], request["children"]["Pod.v1"]
    name, spec = parent["metadata"]["name"], parent.get("spec", {})
    completions = int(spec.get("completions", 1))
    template = spec.get("template", {})
    succeeded = sum(1 for p in pods.values() if p.get("status", {}).get("phase") == "Succeeded")
    failed = sum(1 for p in pods.values() if p.get("status", {}).get("phase") == "Failed")
    children = []
    for index in range(completions):
        pod_spec = copy.deepcopy(template.get("spec", {}))
        pod_spec.setdefault("restartPolicy", "Never")
        for container in pod_spec.get("containers", []):
            env = [e for e in container.get("env", []) if e.get("name") != "JOB_INDEX"]
            container["env"] = [*env, {"name": "JOB_INDEX", "value": str(index)}]
        labels = dict(template.get("metadata", {}).get("labels", {}))
        labels["job-index"] = str(index)
        children.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"{name}-{index}", "labels": labels},
                "spec": pod_spec,
            }
        )
    status = {
        "active": len(pods) - succeeded - failed,
        "succeeded": succeeded,
        "failed": failed,
        "complete": succeeded >= completions,
    }
    return {"status": status, "children": children}


if __name__ == "__main__":
    run({"sync": sync})
