"""Command hooks never see the run's credentials, through the real command on both backends:
every credential a CI runner or a CronJob's Pod holds is planted in the run's environment, and
a kubeconfig file with a token; a command hook writes its whole environment into the child it
makes; none of them is there, while the variables its spec declares (`env`) and names
(`inheritEnv`) are."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.backends import Backend
from tests.support.cli import command_env
from tests.support.controlplane import ControlPlane
from tests.support.examples import EXAMPLES, load_example

PLANTED = {
    "RECONCILE_GIT_TOKEN": "ghp_planted0000000000000000000000",
    "GITHUB_TOKEN": "ghs_planted1111111111111111111111",
    "GH_TOKEN": "ghs_planted2222222222222222222222",
    "ACTIONS_RUNTIME_TOKEN": "planted-runtime-token-3333",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "planted-id-token-4444",
    "AWS_SECRET_ACCESS_KEY": "planted/secret/access/key/5555",
    "AWS_SESSION_TOKEN": "planted-session-token-6666",
    "VAULT_TOKEN": "hvs.planted7777",
    "AZURE_CLIENT_SECRET": "planted-azure-secret-8888",
    "NPM_TOKEN": "npm_planted9999",
    "GIT_SSH_COMMAND": "ssh -i /run/secrets/planted-deploy-key",
}
PLANTED_KUBECONFIG_TOKEN = "planted-kubeconfig-token-abcd"

HOOK = """
import json, os, sys
request = json.load(sys.stdin)
parent = request["parent"]["metadata"]
print(json.dumps({"status": {}, "children": [{
    "apiVersion": "v1", "kind": "ConfigMap",
    "metadata": {"name": parent["name"] + "-env", "namespace": parent["namespace"]},
    "data": {"env": json.dumps(dict(os.environ), sort_keys=True)},
}]}))
"""


def controller(hook: Path) -> dict[str, Any]:
    spec: dict[str, Any] = yaml.safe_load(
        (EXAMPLES / "hello-world" / "controller.yaml").read_text()
    )
    spec["metadata"]["name"] = "hook-environment"
    spec["spec"]["childResources"] = [{"apiVersion": "v1", "resource": "configmaps"}]
    spec["spec"]["hooks"]["sync"] = {
        "command": {
            "argv": [sys.executable, str(hook)],
            "env": {"DECLARED": "declared-value"},
            "inheritEnv": ["FEATURE_FLAGS", "REGION"],
        }
    }
    return spec


def planted_environment(kubeconfig: Path, tmp_path: Path) -> dict[str, str]:
    token_file = tmp_path / "git-token"
    token_file.write_text(PLANTED["RECONCILE_GIT_TOKEN"])
    env = command_env(**PLANTED)
    env.update(
        KUBECONFIG=str(kubeconfig),
        RECONCILE_GIT_TOKEN_FILE=str(token_file),
        FEATURE_FLAGS="fast-path,beta",
        REGION="eu-west-1",
    )
    return env


def run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reconcile", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
        env=env,
    )


def check(hook_env: dict[str, str], kubeconfig: Path) -> None:
    assert hook_env["DECLARED"] == "declared-value"
    assert hook_env["FEATURE_FLAGS"] == "fast-path,beta"
    assert hook_env["REGION"] == "eu-west-1"
    text = json.dumps(hook_env)
    assert "KUBECONFIG" not in hook_env
    for name, value in PLANTED.items():
        assert name not in hook_env and value not in text, name
    assert PLANTED_KUBECONFIG_TOKEN not in text and str(kubeconfig) not in text
    assert not [n for n in hook_env if n.startswith(("RECONCILE_", "GIT_", "ACTIONS_"))]


def test_local(tmp_path: Path) -> None:
    """--local (the in-process cluster): the run still has a kubeconfig in its environment,
    as on a developer's laptop."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump({"users": [{"name": "me", "user": {"token": PLANTED_KUBECONFIG_TOKEN}}]})
    )
    hook = tmp_path / "env-hook.py"
    hook.write_text(HOOK)
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    for name in ("crd.yaml", "hello.yaml"):
        (inputs / name).write_text((EXAMPLES / "hello-world" / name).read_text())
    (inputs / "controller.yaml").write_text(yaml.safe_dump(controller(hook)))
    out = tmp_path / "out"
    env = planted_environment(kubeconfig, tmp_path)
    done = run(["--local", str(inputs), "--output-dir", str(out)], env, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    (child,) = [
        d
        for path in out.rglob("*.yaml")
        for d in yaml.safe_load_all(path.read_text())
        if d and d.get("kind") == "ConfigMap" and d["metadata"]["name"] == "your-name-env"
    ]
    check(json.loads(child["data"]["env"]), kubeconfig)


@pytest.mark.controlplane
def test_live(live_backend: Backend, control_plane: ControlPlane, tmp_path: Path) -> None:
    """The real API server, reached through KUBECONFIG (its token inside): the hook gets
    neither."""
    loaded = load_example(live_backend, "hello-world", "crd.yaml", "hello.yaml")
    hook = tmp_path / "env-hook.py"
    hook.write_text(HOOK)
    controllers = tmp_path / "controller.yaml"
    controllers.write_text(yaml.safe_dump(controller(hook)))
    env = planted_environment(control_plane.kubeconfig, tmp_path)
    args = ["--controllers", str(controllers), "--no-cluster-controllers", "--max-duration", "30"]
    try:
        done = run(args, env, tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        configmaps = live_backend.admin.discover("v1", "configmaps")
        child = live_backend.admin.get(configmaps, "your-name-env", namespace=loaded.name("hello"))
    finally:
        loaded.cleanup()
    hook_env = json.loads(child["data"]["env"])
    check(hook_env, control_plane.kubeconfig)
    token = yaml.safe_load(control_plane.kubeconfig.read_text())["users"]
    assert all(u["user"]["token"] not in child["data"]["env"] for u in token)
