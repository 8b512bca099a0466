"""The GitOps walk-through of `examples/gitops`, through the real command, from a real git
repository: apply a ref with prune, preview a branch end to end, merge, prune a removed parent,
converge; provenance in every report format; the same repository previewed with `--local`."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconcile.cluster.errors import ApiError, NotFound
from tests.support.backends import Backend
from tests.support.cli import reconcile
from tests.support.controlplane import TESTED_USER, ControlPlane
from tests.support.examples import EXAMPLES
from tests.support.gitrepo import git

GITOPS = EXAMPLES / "gitops"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The example as a repository of its own, on `main`."""
    path = tmp_path / "platform"
    shutil.copytree(GITOPS, path)
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "Greetings, first")
    return path


def greetings_file(repo: Path) -> Path:
    return repo / "apps" / "greetings.yaml"


def report_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def planned(report: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {
        (action["action"], action["object"]["kind"], action["object"]["name"])
        for p in report["passes"]
        for c in p["controllers"]
        for parent in c["parents"]
        for action in parent["actions"]
    }


@pytest.fixture
def cleanup(live_backend: Backend) -> Iterator[None]:
    yield
    backend = live_backend
    for api_version, resource, name in (
        ("v1", "namespaces", "greetings"),
        ("apiextensions.k8s.io/v1", "customresourcedefinitions", "greetings.gitops.example.com"),
    ):
        with contextlib.suppress(ApiError):
            backend.admin.delete(backend.admin.discover(api_version, resource), name)


def test_the_walk_through_on_a_real_api_server(
    repo: Path,
    tmp_path: Path,
    live_backend: Backend,
    control_plane: ControlPlane,
    cleanup: None,
) -> None:
    backend = live_backend
    cache = tmp_path / "cache"
    base = [
        "--git",
        f"file://{repo}",
        "--git-cache",
        str(cache),
        "--manifests",
        "apps",
        "--controllers",
        "controllers",
        "--no-cluster-controllers",
        "--kubeconfig",
        str(control_plane.kubeconfig),
        "--context",
        TESTED_USER,
        "--report-format",
        "json",
        "--max-duration",
        "60",
    ]
    configmaps = backend.admin.discover("v1", "configmaps")

    # 1. apply main, with prune
    first = reconcile(*base, "--git-ref", "main", "--prune", cwd=tmp_path)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    report = report_of(first)
    assert report["source"] == {
        "url": f"file://{repo}",
        "ref": "main",
        "commit": git(repo, "rev-parse", "HEAD"),
        "subject": "Greetings, first",
    }
    hello = backend.admin.get(configmaps, "hello-greeting", namespace="greetings")
    assert hello["data"] == {"message": "Hello from git"}

    # 2. a branch adds a greeting and changes another: the dry run shows the children too
    git(repo, "checkout", "-q", "-b", "feature")
    text = greetings_file(repo).read_text().replace("Welcome aboard", "Welcome back")
    text += "---\napiVersion: gitops.example.com/v1\nkind: Greeting\nmetadata:\n"
    text += "  name: hola\n  namespace: greetings\nspec:\n  message: Hola\n"
    greetings_file(repo).write_text(text)
    git(repo, "commit", "-qam", "Greetings: hola")
    mark = backend.mark()
    preview = reconcile(*base, "--git-ref", "feature", "--dry-run", cwd=tmp_path)
    assert preview.returncode == 2, preview.stdout[-3000:] + preview.stderr[-3000:]
    assert backend.mutations_since(mark) == {}
    changes = planned(report_of(preview))
    assert ("create", "Greeting", "hola") in changes
    assert ("create", "ConfigMap", "hola-greeting") in changes  # what the hook would make
    assert ("update", "Greeting", "welcome") in changes
    assert ("update", "ConfigMap", "welcome-greeting") in changes
    assert report_of(preview)["source"]["subject"] == "Greetings: hola"

    # 3. merged, and `hello` removed: applied with prune
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "feature")
    kept = [
        doc for doc in greetings_file(repo).read_text().split("---\n") if "name: hello" not in doc
    ]
    greetings_file(repo).write_text("---\n".join(kept))
    git(repo, "commit", "-qam", "Greetings: no more hello")
    merged = reconcile(*base, "--prune", cwd=tmp_path)  # the default branch
    assert merged.returncode == 0, merged.stdout[-3000:] + merged.stderr[-3000:]
    assert ("delete", "Greeting", "hello") in planned(report_of(merged))
    greetings = backend.admin.discover("gitops.example.com/v1", "greetings")
    with pytest.raises(NotFound):
        backend.admin.get(greetings, "hello", namespace="greetings")
    hola = backend.admin.get(configmaps, "hola-greeting", namespace="greetings")
    assert hola["data"] == {"message": "Hola"}
    welcome = backend.admin.get(configmaps, "welcome-greeting", namespace="greetings")
    assert welcome["data"] == {"message": "Welcome back"}  # the changed parent's child followed
    # (the pruned parent's ConfigMap is the garbage collector's to remove, in its own time)

    # 4. converged: nothing to write, the commit already in the cache
    mark = backend.mark()
    again = reconcile(*base, "--prune", "--report-format", "text", cwd=tmp_path)
    assert again.returncode == 0, again.stdout[-3000:]
    assert backend.mutations_since(mark) == {}
    commit = git(repo, "rev-parse", "HEAD")[:12]
    assert f"source: file://{repo} @ main: {commit} Greetings: no more hello\n" in again.stdout


def test_a_repository_previewed_with_no_cluster(repo: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    done = reconcile(
        "--git",
        str(repo),
        "--git-cache",
        str(tmp_path / "cache"),
        "--local",
        "apps",
        "--controllers",
        "controllers",
        "--report-format",
        "json",
        "--report-file",
        f"markdown:{summary}",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = report_of(done)
    assert report["converged"] and report["source"]["ref"] == "main"
    assert ("create", "ConfigMap", "hello-greeting") in planned(report)
    markdown = summary.read_text()
    source_line = next(line for line in markdown.splitlines() if line.startswith("Source: "))
    assert f"platform @ main: {git(repo, 'rev-parse', 'HEAD')[:12]} Greetings, first" in (
        source_line
    )


def test_a_failing_clone_never_shows_the_token(tmp_path: Path) -> None:
    token = "glpat-notarealtoken-0123456789"
    done = reconcile(
        "--git",
        f"https://ci:{token}@127.0.0.1:9/platform.git",
        "--git-cache",
        str(tmp_path / "cache"),
        "--local",
        "apps",
        "--report-format",
        "json",
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert token not in done.stdout + done.stderr
    assert "https://127.0.0.1:9/platform.git" in done.stdout + done.stderr


def test_paths_outside_the_repository_are_refused(repo: Path, tmp_path: Path) -> None:
    done = reconcile(
        "--git",
        str(repo),
        "--git-cache",
        str(tmp_path / "c"),
        "--local",
        "../outside",
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert "--local ../outside: with --git, paths are read inside the repository" in done.stderr


def test_an_unknown_ref_stops_the_run_before_anything(repo: Path, tmp_path: Path) -> None:
    done = reconcile(
        "--git",
        str(repo),
        "--git-ref",
        "no-such-branch",
        "--git-cache",
        str(tmp_path / "c"),
        "--local",
        "apps",
        "--report-format",
        "json",
        cwd=tmp_path,
    )
    assert done.returncode == 1
    report = report_of(done)
    assert report["loadErrors"] == [f"git: {repo} has no branch, tag or ref named 'no-such-branch'"]
    assert report["passes"] == []
