"""`--local` as a current Kubernetes release, through the real command: current API versions
load, an invalid built-in object is refused with the server's words, naming object and field,
and `--kubernetes-version` picks the release."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import reconcile

MANIFESTS = Path(__file__).parent / "data" / "current-release.yaml"


def test_current_api_versions_load_and_invalid_objects_are_refused(tmp_path: Path) -> None:
    done = reconcile("--local", str(MANIFESTS), "--dry-run", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    errors = done.stdout[done.stdout.index("Errors") :]
    assert "1 manifest failed to load" in errors
    assert 'Pod team/bad: Invalid (422): Pod "bad" is invalid: spec.containers: Required value' in (
        errors
    )
    assert "CronJob" not in errors and "HorizontalPodAutoscaler" not in errors


def test_an_older_release_does_not_serve_todays_versions(tmp_path: Path) -> None:
    done = reconcile(
        "--local", str(MANIFESTS), "--dry-run", "--kubernetes-version", "1.20", cwd=tmp_path
    )
    assert done.returncode == 1
    assert (
        'CronJob team/nightly: NotFound (404): the server doesn\'t have a resource type "CronJob" '
        'in apiVersion "batch/v1"'
    ) in done.stdout
    assert "4 manifests failed to load" in done.stdout
