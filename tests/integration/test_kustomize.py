"""Directories holding a kustomization, rendered by kustomize, and `-` for standard input, given
to `--manifests`, `--controllers` and `--local` (and inside `--git`): an overlay with a base,
patches and generated names; a `-R` walk renders overlays, not their bases again; command hooks
run in the kustomization's directory; remote bases and bases outside the repository are refused;
kustomize is found on PATH, or kubectl's."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner, Result

from reconcile.cli.run import app
from reconcile.cluster.errors import ApiError
from tests.support.backends import Backend
from tests.support.cli import command_env, reconcile
from tests.support.controllers import run
from tests.support.controlplane import TESTED_USER, ControlPlane
from tests.support.gitrepo import git

DATA = Path(__file__).parent / "data" / "kustomize"
GENERATED = re.compile(r"^greeting-[a-z0-9]{10}$")  # kustomize's hash suffix


def fixtures(tmp_path: Path, *, namespace: str = "kz", group: str = "kz.example.com") -> Path:
    """The fixtures, copied, with this test's namespace and API group."""
    root = tmp_path / "fixtures"
    shutil.copytree(DATA, root)
    for file in root.rglob("*"):
        if file.is_file():
            text = file.read_text()
            file.write_text(text.replace("TEST_NAMESPACE", namespace).replace("TEST_GROUP", group))
    return root


def applyset() -> str:
    return f"default/kz-{uuid.uuid4().hex[:8]}"


def rendered_apps(backend: Backend, namespace: str) -> dict[str, Any]:
    """What the apps overlay made in `namespace`: its ConfigMaps by name, and the Pod."""
    configmaps = backend.admin.discover("v1", "configmaps")
    pods = backend.admin.discover("v1", "pods")
    found = {
        o["metadata"]["name"]: o
        for o in backend.admin.list(configmaps, namespace=namespace).items
        if o["metadata"]["name"] != "kube-root-ca.crt"
    }
    found["pod"] = backend.admin.get(pods, "greeter", namespace=namespace)
    return found


def assert_the_overlay(objects: dict[str, Any]) -> None:
    (generated,) = [name for name in objects if GENERATED.match(name)]
    assert set(objects) == {"settings", generated, "pod"}, sorted(objects)  # no base of its own
    assert objects["settings"]["data"] == {"level": "debug", "color": "blue", "tier": "production"}
    assert objects[generated]["data"] == {"message": "hello from the overlay"}
    (container,) = objects["pod"]["spec"]["containers"]
    assert container["envFrom"] == [{"configMapRef": {"name": generated}}]


def test_an_overlay_applied_by_manifests_and_walked_with_r(
    backend: Backend, tmp_path: Path, namespace: str
) -> None:
    """The overlay alone, then the directory holding base and overlay with -R: the same
    objects (the base is rendered as part of the overlay, never on its own), so the second
    run changes nothing."""
    apps = fixtures(tmp_path, namespace=namespace) / "apps"
    aset = applyset()
    first = run(backend, apply_paths=(str(apps / "overlay"),), applyset=aset)
    assert first.errors == [] and first.load_errors == [], (first.errors, first.load_errors)
    assert_the_overlay(rendered_apps(backend, namespace))
    mark = backend.mark()
    walked = run(backend, apply_paths=(str(apps),), applyset=aset, recursive=True, prune=True)
    assert walked.errors == [] and walked.load_errors == [], walked.load_errors
    assert backend.mutations_since(mark) == {}


def test_controllers_from_a_kustomization_run_hooks_in_its_directory(
    backend: Backend, tmp_path: Path, namespace: str
) -> None:
    widgets = backend.apply_crd("Widget")
    overlay = fixtures(tmp_path, group=widgets.group) / "controllers" / "overlay"
    backend.admin.create(
        widgets,
        {
            "apiVersion": widgets.api_version,
            "kind": "Widget",
            "metadata": {"name": "one", "namespace": namespace},
        },
    )
    result = run(backend, overlay)
    assert result.errors == [] and result.load_errors == [], (result.errors, result.load_errors)
    configmaps = backend.admin.discover("v1", "configmaps")
    child = backend.admin.get(configmaps, "one-hook", namespace=namespace)
    assert child["data"] == {"variant": "overlay", "cwd": str(overlay.resolve())}


def shim_dir(tmp_path: Path) -> tuple[Path, Path]:
    """A directory holding a `kustomize` that records its arguments and renders with kubectl's
    kustomize; and the file it records to (kustomize runs without the run's environment, so the
    path is written into the script)."""
    directory = tmp_path / "shim"
    directory.mkdir()
    calls = tmp_path / "calls"
    script = directory / "kustomize"
    script.write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexec kubectl kustomize "$2"\n')
    script.chmod(0o755)
    return directory, calls


def test_local_prefers_kustomize_and_renders_each_kustomization_once(tmp_path: Path) -> None:
    """`--local` reads the overlay three times (the cluster's seed, the controllers, and
    `--output-dir` asking where they came from): kustomize renders it once."""
    root = fixtures(tmp_path)
    shim, calls = shim_dir(tmp_path)
    out = tmp_path / "out"
    overlay = root / "controllers" / "overlay"
    done = reconcile(
        *("--local", str(overlay), "--local", str(root / "widgets")),
        *("--output-dir", str(out), "--report-format", "json"),
        cwd=tmp_path,
        env={"PATH": f"{shim}{os.pathsep}{os.environ['PATH']}"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert calls.read_text().splitlines() == [f"build {overlay.resolve()}"]
    child = yaml.safe_load((out / "kz" / "configmaps" / "one-hook.yaml").read_text())
    assert child["data"] == {"variant": "overlay", "cwd": str(overlay.resolve())}
    # the dump of the controller runs its hooks where they ran
    (dumped,) = (out / "_cluster").glob("compositecontrollers.*/kustomized.yaml")
    command = yaml.safe_load(dumped.read_text())["spec"]["hooks"]["sync"]["command"]
    assert (dumped.parent / command["workingDir"]).resolve() == overlay.resolve()


def invoke(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> Result:
    """The command in this process (quicker than a new one for runs on `--local`)."""
    return CliRunner().invoke(app, list(args), env=env, input=stdin)


def test_without_kustomize_or_kubectl_the_error_names_both(tmp_path: Path) -> None:
    overlay = fixtures(tmp_path) / "apps" / "overlay"
    empty = tmp_path / "bin"
    empty.mkdir()
    done = invoke("--local", str(overlay), env={"PATH": str(empty)})
    assert done.exit_code == 1
    assert f"{overlay} holds a kustomization, but neither kustomize nor kubectl" in done.output


def remote_overlay(tmp_path: Path) -> Path:
    """An overlay whose second resource is a repository (unreachable: nothing listens on port
    1, so kustomize fails at once)."""
    root = fixtures(tmp_path)
    overlay = root / "remote"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(
        "resources:\n  - ../apps/base\n  - https://127.0.0.1:1/acme/platform//base?ref=v1\n"
    )
    return overlay


def test_a_remote_base_is_refused_unless_allowed(tmp_path: Path) -> None:
    overlay = remote_overlay(tmp_path)
    refused = invoke("--local", str(overlay))
    assert refused.exit_code == 1
    assert (
        f"{overlay / 'kustomization.yaml'}: resources[1] entry "
        "'https://127.0.0.1:1/acme/platform//base?ref=v1' is remote" in refused.output
    ), refused.output
    assert "--kustomize-allow-remote allows it" in refused.output
    # allowed, by the option or its variable: kustomize itself tries, and says why it failed
    for args, env in (
        (["--kustomize-allow-remote"], {}),
        ([], {"RECONCILE_KUSTOMIZE_ALLOW_REMOTE": "true"}),
    ):
        allowed = invoke("--local", str(overlay), *args, env=env)
        assert allowed.exit_code == 1
        assert "is remote" not in allowed.output
        assert f"kubectl kustomize {overlay} failed: " in allowed.output, allowed.output
        assert "127.0.0.1:1" in allowed.output


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The fixtures as a repository, with a kustomization whose base is outside it."""
    path = fixtures(tmp_path)
    escape = path / "escape"
    escape.mkdir()
    (escape / "kustomization.yaml").write_text("resources:\n  - ../../outside\n")
    outside = tmp_path / "outside"  # beside the repository: it exists, but is not in it
    outside.mkdir()
    (outside / "kustomization.yaml").write_text("resources: []\n")
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "Kustomizations")
    return path


def test_git_renders_kustomizations_in_the_checkout_and_refuses_a_base_outside(
    repo: Path, tmp_path: Path
) -> None:
    source = ("--git", f"file://{repo}", "--git-cache", str(tmp_path / "cache"))
    out = tmp_path / "out"
    done = invoke(
        *source,
        *("--local", "controllers/overlay", "--local", "widgets", "--output-dir", str(out)),
    )
    assert done.exit_code == 0, done.output[-3000:]
    child = yaml.safe_load((out / "kz" / "configmaps" / "one-hook.yaml").read_text())
    assert child["data"]["variant"] == "overlay"
    assert child["data"]["cwd"].endswith("/controllers/overlay")  # in the checkout
    assert not child["data"]["cwd"].startswith(str(repo))

    escaped = invoke(*source, "--local", "escape")
    assert escaped.exit_code == 1
    assert (
        "escape/kustomization.yaml: resources[0] entry '../../outside' resolves outside the "
        "repository" in escaped.output
    ), escaped.output


@contextlib.contextmanager
def live_namespace(backend: Backend) -> Iterator[str]:
    name = f"kz-{uuid.uuid4().hex[:8]}"
    namespaces = backend.admin.discover("v1", "namespaces")
    backend.admin.create(
        namespaces, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    )
    try:
        yield name
    finally:
        with contextlib.suppress(ApiError):
            backend.admin.delete(namespaces, name)


@pytest.mark.controlplane
def test_git_manifests_from_an_overlay_on_a_real_api_server(
    live_backend: Backend, control_plane: ControlPlane, tmp_path: Path
) -> None:
    with live_namespace(live_backend) as namespace:
        path = fixtures(tmp_path, namespace=namespace)
        git(path, "init", "-q", "-b", "main")
        git(path, "add", "-A")
        git(path, "commit", "-qm", "Apps")
        done = reconcile(
            *("--git", f"file://{path}", "--git-cache", str(tmp_path / "cache")),
            *("--manifests", "apps", "-R", "--applyset", applyset()),
            *("--kubeconfig", str(control_plane.kubeconfig), "--context", TESTED_USER),
            "--no-cluster-controllers",
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert_the_overlay(rendered_apps(live_backend, namespace))


def with_input(
    *args: str, stdin: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reconcile", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
        env=command_env(**(env or {})),
    )


def test_local_from_standard_input_runs_hooks_in_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = fixtures(tmp_path)
    rendered = subprocess.run(
        ["kubectl", "kustomize", str(root / "controllers" / "overlay")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    manifests = "---\n".join(
        [*(f.read_text() for f in sorted((root / "widgets").glob("*.yaml"))), rendered]
    )
    here = tmp_path / "here"
    here.mkdir()
    shutil.copy(root / "controllers" / "overlay" / "hook.py", here)
    out = tmp_path / "out"
    monkeypatch.chdir(here)
    done = invoke("--local", "-", "--output-dir", str(out), stdin=manifests)
    assert done.exit_code == 0, done.output[-3000:]
    child = yaml.safe_load((out / "kz" / "configmaps" / "one-hook.yaml").read_text())
    assert child["data"] == {"variant": "overlay", "cwd": str(here.resolve())}

    broken = invoke("--local", "-", stdin="kind: ConfigMap\n---\n- a list\n")
    assert broken.exit_code == 1
    assert "(standard input) (document 2): not a mapping but a YAML list" in broken.output


@pytest.mark.controlplane
def test_manifests_from_standard_input_on_a_real_api_server(
    live_backend: Backend, control_plane: ControlPlane, tmp_path: Path
) -> None:
    with live_namespace(live_backend) as namespace:
        manifest = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "piped", "namespace": namespace},
            "data": {"from": "standard input"},
        }
        done = with_input(
            *("--manifests", "-", "--applyset", applyset(), "--no-cluster-controllers"),
            *("--kubeconfig", str(control_plane.kubeconfig), "--context", TESTED_USER),
            stdin=yaml.safe_dump(manifest),
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        configmaps = live_backend.admin.discover("v1", "configmaps")
        piped = live_backend.admin.get(configmaps, "piped", namespace=namespace)
        assert piped["data"] == {"from": "standard input"}


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--local", "-", "--manifests", "-"], "--local and --manifests both read standard input"),
        (["--controllers", "-", "--local", "-"], "--controllers and --local both"),
        (["--manifests", "-", "--manifests", "-"], "--manifests names standard input (-) more"),
    ],
)
def test_standard_input_is_read_once(args: list[str], named: str) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1
    assert named in " ".join(result.output.replace("│", " ").split()), result.output
