"""ConfigMapPropagation (cluster-scoped): copies one ConfigMap into every target namespace
that exists. The customize hook asks for the source ConfigMap and all namespaces; the sync
hook sees them under `related`."""

from __future__ import annotations

from typing import Any

from hooklib import run  # hooklib.py beside this file


def customize(request: dict[str, Any]) -> dict[str, Any]:
    spec = request["parent"].get("spec", {})
    return {
        "relatedResources": [
            {
                "apiVersion": "v1",
                "resource": "configmaps",
                "namespace": spec["sourceNamespace"],
                "names": [spec["sourceName"]],
            },
            {"apiVersion": "v1", "resource": "namespaces", "labelSelector": {}},
        ]
    }


def sync(request: dict[str, Any]) -> dict[str, Any]:
    parent, related = request["parent"], request["related"]
    spec = parent.get("spec", {})
    source_key = f"{spec['sourceNamespace']}/{spec['sourceName']}"
    source = related.get("ConfigMap.v1", {}).get(source_key)
    existing = set(related.get("Namespace.v1", {}))
    targets = [ns for ns in spec.get("targetNamespaces", []) if ns in existing]
    children = []
    if source is not None:
        for namespace in targets:
            children.append(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {
                        "name": spec["sourceName"],
                        "namespace": namespace,
                        "labels": {"propagation": parent["metadata"]["name"]},
                    },
                    "data": source.get("data", {}),
                }
            )
    observed = request["children"]["ConfigMap.v1"]
    status = {
        "source": "found" if source is not None else "missing",
        "expectedCopies": len(targets),
        "actualCopies": len(observed),
    }
    return {"status": status, "children": children}


if __name__ == "__main__":
    run({"customize": customize, "sync": sync})
