"""Writing CompositeController files for tests and running the runner on a backend."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from reconcile.cluster.types import ResourceInfo
from reconcile.config import ReconcileSettings
from reconcile.results import RunResult
from reconcile.runner.run import RunLoop
from tests.support.backends import Backend


def webhook(url: str, timeout: str = "5s") -> dict[str, Any]:
    return {"webhook": {"url": url, "timeout": timeout}}


def composite(
    name: str,
    parent: ResourceInfo,
    children: list[tuple[str, str, str]],  # (apiVersion, resource, update method)
    hooks: dict[str, dict[str, Any]],
    **spec: Any,
) -> dict[str, Any]:
    return {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "CompositeController",
        "metadata": {"name": name},
        "spec": {
            "parentResource": {"apiVersion": parent.api_version, "resource": parent.resource},
            "childResources": [
                {"apiVersion": a, "resource": r, "updateStrategy": {"method": m}}
                for a, r, m in children
            ],
            "hooks": hooks,
            **spec,
        },
    }


def write_controllers(directory: Path, *controllers: dict[str, Any]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "controllers.yaml"
    path.write_text(yaml.safe_dump_all(controllers))
    return path


def run(backend: Backend, *paths: Path, **settings: Any) -> RunResult:
    options: dict[str, Any] = {
        "controllers_from_cluster": False,
        "max_duration": 20.0,
        "poll_interval": 0.2,
        "workers": 4,
    }
    options.update(settings)
    config = ReconcileSettings(controller_paths=tuple(str(p) for p in paths), **options)
    return RunLoop(backend.cluster, config).run()
