"""configmap-transform: for every ConfigMap a ConfigMapTransform selects, a copy whose keys are
environment variable names (`log-level` -> `APP_LOG_LEVEL` with prefix `APP_`), named
`<input>-<suffix>` (suffix `env` by default) and labelled like its input."""

from __future__ import annotations

import re
from typing import Any

from hooklib import run  # hooklib.py beside this file


def env_name(key: str, prefix: str) -> str:
    return prefix + re.sub(r"[^A-Za-z0-9_]", "_", key).upper()


def map_hook(request: dict[str, Any]) -> dict[str, Any]:
    spec = request["parent"].get("spec", {})
    source = request["input"]
    meta = source["metadata"]
    prefix = spec.get("prefix", "")
    copy = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": f"{meta['name']}-{spec.get('suffix') or 'env'}",
            "labels": dict(meta.get("labels") or {}),
        },
        "data": {env_name(k, prefix): v for k, v in sorted((source.get("data") or {}).items())},
    }
    return {"outputs": [copy]}


if __name__ == "__main__":
    run({"map": map_hook})
