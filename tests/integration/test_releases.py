"""What differs between the releases tested, end to end on both backends: a child kind in the
version each release serves (1.20's `batch/v1beta1` CronJob, the current `batch/v1` one), and a
controller naming a version its release no longer serves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reconcile.cluster.types import Obj, ResourceInfo
from tests.support.backends import Backend
from tests.support.controllers import composite, run, webhook, write_controllers
from tests.support.controlplane import CURRENT_RELEASE, OLDEST_RELEASE
from tests.support.hookserver import serve

CRONJOB_VERSION = {OLDEST_RELEASE: "batch/v1beta1", CURRENT_RELEASE: "batch/v1"}


def parent(resource: ResourceInfo, namespace: str) -> Obj:
    return {
        "apiVersion": resource.api_version,
        "kind": resource.kind,
        "metadata": {"name": "nightly", "namespace": namespace},
        "spec": {"selector": {"matchLabels": {"app": "nightly"}}, "schedule": "0 3 * * *"},
    }


def cronjob(api_version: str, schedule: str) -> Obj:
    """A CronJob as a published operator writes it: a quantity the server writes otherwise
    (`1000m` is stored as `"1"`), defaults left to the server, and a field no version of the
    kind has (`_ttlSecondsAfterFinished`), which the server drops."""
    container = {
        "name": "backup",
        "image": "busybox:1.36",
        "args": ["sh", "-c", "echo backup"],
        "resources": {"limits": {"cpu": "1000m", "memory": "64Mi"}},
    }
    return {
        "apiVersion": api_version,
        "kind": "CronJob",
        "metadata": {"name": "nightly-backup", "labels": {"app": "nightly"}},
        "spec": {
            "schedule": schedule,
            "jobTemplate": {
                "spec": {
                    "_ttlSecondsAfterFinished": 100,
                    "template": {"spec": {"restartPolicy": "OnFailure", "containers": [container]}},
                }
            },
        },
    }


@pytest.mark.releases(
    CURRENT_RELEASE,
    OLDEST_RELEASE,
    why="CronJob is batch/v1beta1 on 1.20 and batch/v1 from 1.21; each release defaults it",
)
def test_a_cronjob_child_in_the_version_its_release_serves_converges(
    backend: Backend, namespace: str, widgets: ResourceInfo, tmp_path: Path, kube_release: str
) -> None:
    api_version = CRONJOB_VERSION[kube_release]
    backend.admin.create(widgets, parent(widgets, namespace))

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        schedule = request["parent"]["spec"]["schedule"]
        return {"status": {"scheduled": schedule}, "children": [cronjob(api_version, schedule)]}

    with serve(sync) as hook:
        controller = composite(
            "nightly", widgets, [(api_version, "cronjobs", "InPlace")], {"sync": webhook(hook.url)}
        )
        path = write_controllers(tmp_path, controller)
        first = run(backend, path)
        assert first.errors == [] and first.converged, first.errors
        dropped = "spec.jobTemplate.spec._ttlSecondsAfterFinished"
        assert [w for w in first.warnings if dropped in w and "CronJob" in w], first.warnings
        cronjobs = backend.admin.discover(api_version, "cronjobs")
        stored = backend.admin.get(cronjobs, "nightly-backup", namespace=namespace)
        template = stored["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        assert template["containers"][0]["resources"]["limits"]["cpu"] == "1"  # as stored
        assert stored["spec"]["concurrencyPolicy"] == "Allow"  # the release's default
        assert "_ttlSecondsAfterFinished" not in stored["spec"]["jobTemplate"]["spec"]

        mark = backend.mark()
        again = run(backend, path)
        assert again.errors == [] and again.converged
        assert backend.mutations_since(mark) == {}  # converged: nothing sent


def test_a_version_the_release_no_longer_serves_fails_its_controller_by_field(
    backend: Backend, namespace: str, widgets: ResourceInfo, tmp_path: Path
) -> None:
    """`batch/v1beta1` CronJobs, gone since 1.25: the controller naming them fails, naming
    the field; the other controllers run."""
    backend.admin.create(widgets, parent(widgets, namespace))

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        return {"status": {}, "children": []}

    with serve(sync) as hook:
        old = composite(
            "old-cronjobs",
            widgets,
            [("batch/v1beta1", "cronjobs", "InPlace")],
            {"sync": webhook(hook.url)},
        )
        current = composite(
            "configmaps", widgets, [("v1", "configmaps", "InPlace")], {"sync": webhook(hook.url)}
        )
        current["spec"]["parentResource"]["labelSelector"] = {"matchLabels": {"none": "x"}}
        result = run(backend, write_controllers(tmp_path, old, current))
    assert any(
        "old-cronjobs" in error and "spec.childResources[0]" in error for error in result.errors
    ), result.errors
    assert all("configmaps" not in error for error in result.errors), result.errors
