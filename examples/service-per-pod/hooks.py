"""service-per-pod, in the spirit of Metacontroller's example: two DecoratorControllers.

- `service-per-pod` decorates StatefulSets annotated with `service-per-pod-label` and
  `service-per-pod-ports`: one Service per Pod (`<statefulset>-<ordinal>`), selecting the Pod by
  the label the first annotation names; its finalize hook removes them all when the StatefulSet
  opts out (or is deleted).
- `pod-name-label` decorates Pods annotated with `pod-name-label`: it labels each Pod with its own
  name under the label that annotation names.
"""

from __future__ import annotations

from typing import Any

from hooklib import run  # hooklib.py beside this file


def _ports(spec: str) -> list[dict[str, Any]]:
    ports = []
    for pair in spec.split(","):
        port, _, target = pair.strip().partition(":")
        ports.append({"port": int(port), "targetPort": int(target or port)})
    if len(ports) > 1:
        for index, item in enumerate(ports):
            item["name"] = f"port-{index}"
    return ports


def sync_service_per_pod(request: dict[str, Any]) -> dict[str, Any]:
    sts = request["object"]
    annotations = sts["metadata"].get("annotations", {})
    label = annotations["service-per-pod-label"]
    ports = _ports(annotations["service-per-pod-ports"])
    name = sts["metadata"]["name"]
    services = [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": f"{name}-{ordinal}"},
            "spec": {"selector": {label: f"{name}-{ordinal}"}, "ports": ports},
        }
        for ordinal in range(int(sts.get("spec", {}).get("replicas", 1)))
    ]
    return {"attachments": services}


def finalize_service_per_pod(request: dict[str, Any]) -> dict[str, Any]:
    # no Services any more; finalized once none is left
    left = request.get("attachments", {}).get("Service.v1", {})
    return {"attachments": [], "finalized": not left}


def sync_pod_name_label(request: dict[str, Any]) -> dict[str, Any]:
    pod = request["object"]
    label = pod["metadata"].get("annotations", {})["pod-name-label"]
    return {"labels": {label: pod["metadata"]["name"]}}


if __name__ == "__main__":
    run(
        {
            "sync-service-per-pod": sync_service_per_pod,
            "finalize-service-per-pod": finalize_service_per_pod,
            "sync-pod-name-label": sync_pod_name_label,
        }
    )
