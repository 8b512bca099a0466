"""What a command hook's environment is made of (reconcile.hooks.environment) and which
`inheritEnv` names a controller may give (reconcile.specs.hook_env), with plain dicts."""

from __future__ import annotations

import subprocess
import sys

import pytest

from reconcile.hooks.environment import hook_environment
from reconcile.specs.errors import SpecError
from reconcile.specs.fields import Fields
from reconcile.specs.hooks import CommandSpec
from reconcile.specs.hooks_parse import parse_hook

#: The credentials a CI runner or a CronJob's Pod holds, as examples.
RUN_CREDENTIALS = {
    "KUBECONFIG": "/home/runner/.kube/config",
    "RECONCILE_GIT_TOKEN": "ghp_planted0000000000000000000000",
    "RECONCILE_GIT_TOKEN_FILE": "/run/secrets/git-token",
    "RECONCILE_KUBECONFIG": "/etc/reconcile/kubeconfig",
    "GITHUB_TOKEN": "ghs_planted1111111111111111111111",
    "GH_TOKEN": "ghs_planted2222222222222222222222",
    "ACTIONS_RUNTIME_TOKEN": "planted-runtime-token",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "planted-id-token",
    "ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.actions.example/abc",
    "AWS_ACCESS_KEY_ID": "AKIAPLANTED000000000",
    "AWS_SECRET_ACCESS_KEY": "planted/secret/access/key",
    "AWS_SESSION_TOKEN": "planted-session-token",
    "VAULT_TOKEN": "hvs.planted",
    "GOOGLE_APPLICATION_CREDENTIALS": "/run/secrets/gcp.json",
    "AZURE_CLIENT_SECRET": "planted-azure-secret",
    "DOCKER_AUTH_CONFIG": "{planted}",
    "NPM_TOKEN": "npm_planted",
    "GIT_ASKPASS": "/usr/lib/git-askpass",
    "GIT_SSH_COMMAND": "ssh -i /run/secrets/deploy-key",
    "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock",
    "KUBERNETES_SERVICE_HOST": "10.0.0.1",
}
BASE = {"PATH": "/usr/bin:/bin", "HOME": "/home/runner", "LANG": "C.UTF-8", "LC_ALL": "C"}


def command(**fields: object) -> CommandSpec:
    spec = parse_hook(
        Fields(
            "CompositeController c",
            "spec.hooks.sync",
            {"command": {"argv": ["python3", "hook.py"], **fields}},
        ),
        "sync",
        "CompositeController c",
    )
    assert spec.command is not None
    return spec.command


def test_the_run_s_credentials_never_reach_a_hook() -> None:
    env = hook_environment(command(), {**BASE, **RUN_CREDENTIALS}, lambda value: False)
    assert env == BASE


def test_declared_and_inherited_variables_arrive() -> None:
    outer = {**BASE, **RUN_CREDENTIALS, "HTTPS_PROXY": "http://proxy:3128", "REGION": "eu"}
    spec = command(env={"LOG_LEVEL": "debug"}, inheritEnv=["HTTPS_PROXY", "REGION", "UNSET"])
    env = hook_environment(spec, outer, lambda value: False)
    assert env == {**BASE, "LOG_LEVEL": "debug", "HTTPS_PROXY": "http://proxy:3128", "REGION": "eu"}


def test_an_inherited_value_the_run_knows_as_a_secret_is_not_passed() -> None:
    outer = {**BASE, "DATABASE_URL": "postgres://app:hunter22@db/app"}
    spec = command(inheritEnv=["DATABASE_URL"])
    env = hook_environment(spec, outer, lambda value: "hunter22" in value)
    assert env == BASE


#: Run variables that are not secrets themselves (a hook may ask for them by name)
HARMLESS = {"KUBERNETES_SERVICE_HOST", "AWS_ACCESS_KEY_ID", "ACTIONS_ID_TOKEN_REQUEST_URL"}


@pytest.mark.parametrize("name", sorted(RUN_CREDENTIALS.keys() - HARMLESS))
def test_inherit_env_refuses_the_run_s_own_and_credential_names(name: str) -> None:
    with pytest.raises(SpecError) as refused:
        command(inheritEnv=["REGION", name])
    assert "spec.hooks.sync.command.inheritEnv[1]" in str(refused.value)
    assert name in str(refused.value)


@pytest.mark.parametrize("name", ["", "1ABC", "A-B", "A=B", "A B"])
def test_inherit_env_refuses_what_is_not_a_variable_name(name: str) -> None:
    with pytest.raises(SpecError, match=r"inheritEnv\[0\]"):
        command(inheritEnv=[name])


def test_inherit_env_must_be_a_list_of_strings() -> None:
    with pytest.raises(SpecError, match="inheritEnv"):
        command(inheritEnv="HTTPS_PROXY")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_the_run_is_not_dumpable_so_its_environment_is_private() -> None:
    """A command hook runs as the same user: with the run not dumpable it cannot read
    /proc/<run>/environ (unless it is root). PR_GET_DUMPABLE says 0 after the call."""
    code = (
        "import ctypes; from reconcile.job.process import keep_process_private; "
        "libc = ctypes.CDLL(None); print(libc.prctl(3, 0, 0, 0, 0)); "
        "keep_process_private(); print(libc.prctl(3, 0, 0, 0, 0))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["1", "0"], done.stdout + done.stderr
