"""The kustomized controller's sync hook: one ConfigMap per Widget, saying which variant of the
controller ran the hook (its argument) and in which directory."""

import json
import os
import sys

request = json.load(sys.stdin)
name = request["parent"]["metadata"]["name"]
child = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": f"{name}-hook"},
    "data": {"variant": sys.argv[1], "cwd": os.getcwd()},
}
json.dump({"status": {"variant": sys.argv[1]}, "children": [child]}, sys.stdout)
