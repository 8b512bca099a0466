"""HelloWorld: one Pod per HelloWorld that says hello to `spec.who`."""

from __future__ import annotations

from typing import Any

from hooklib import run  # hooklib.py beside this file


def sync(request: dict[str, Any]) -> dict[str, Any]:
    parent, children = request["parent"], request["children"]
    who = parent.get("spec", {}).get("who", "World")
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": parent["metadata"]["name"]},
        "spec": {
            "restartPolicy": "OnFailure",
            "containers": [
                {"name": "hello", "image": "busybox", "command": ["echo", f"Hello, {who}!"]}
            ],
        },
    }
    return {"status": {"pods": len(children["Pod.v1"])}, "children": [pod]}


if __name__ == "__main__":
    run({"sync": sync})
