"""The greeter's sync hook: a ConfigMap per Greeting, holding its message.

A local command hook: the request is JSON on standard input, the response JSON on standard
output. Standard library only.
"""

import json
import sys


def sync(request):
    parent = request["parent"]
    name = parent["metadata"]["name"]
    message = parent.get("spec", {}).get("message", "Hello")
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{name}-greeting"},
        "data": {"message": message},
    }
    children = request.get("children", {}).get("ConfigMap.v1", {})
    return {"status": {"greeted": len(children)}, "children": [configmap]}


if __name__ == "__main__":
    json.dump(sync(json.load(sys.stdin)), sys.stdout)
