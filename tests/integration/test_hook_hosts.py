"""`--allowed-hook-hosts` on both backends: a webhook on a host outside the list is never
called (its server counts no request), its parent fails naming the host and keeps what it had,
and the other controllers carry on; through the command, a bad pattern is a usage error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reconcile.cluster.types import Obj, ResourceInfo
from tests.support.backends import Backend
from tests.support.cli import reconcile
from tests.support.controllers import composite, run, webhook, write_controllers
from tests.support.events import sync_errors
from tests.support.hookserver import serve

CM = ("v1", "configmaps", "InPlace")


def parent(resource: ResourceInfo, name: str, namespace: str) -> Obj:
    return {
        "apiVersion": resource.api_version,
        "kind": resource.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": {"app": name}}},
    }


def child_of(request: dict[str, Any]) -> dict[str, Any]:
    name = request["parent"]["metadata"]["name"]
    meta = {"name": f"{name}-child", "labels": {"app": name}}
    return {"children": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}]}


def test_a_hook_outside_the_allowed_hosts_is_never_called(
    backend: Backend, namespace: str, tmp_path: Path
) -> None:
    inside_kind, outside_kind = backend.apply_crd("Inside"), backend.apply_crd("Outside")
    backend.admin.create(inside_kind, parent(inside_kind, "in", namespace))
    backend.admin.create(outside_kind, parent(outside_kind, "out", namespace))
    with serve(child_of) as allowed, serve(child_of) as elsewhere:
        # the same loopback server, named by a host the list does not hold
        elsewhere_url = elsewhere.url.replace("127.0.0.1", "localhost")
        controllers = write_controllers(
            tmp_path,
            composite("inside", inside_kind, [CM], {"sync": webhook(allowed.url)}),
            composite("outside", outside_kind, [CM], {"sync": webhook(elsewhere_url)}),
        )
        result = run(backend, controllers, allowed_hook_hosts=("127.0.0.1", "*.example.com"))
    assert elsewhere.requests == [] and allowed.requests
    (error,) = result.errors
    assert "out" in error and "localhost:" in error and "allowed hook hosts" in error, error
    configmaps = backend.admin.discover("v1", "configmaps")
    names = {
        c["metadata"]["name"] for c in backend.admin.list(configmaps, namespace=namespace).items
    }
    assert names >= {"in-child"} and "out-child" not in names
    assert any("allowed hook hosts" in m for m in sync_errors(backend, namespace, "out"))


def test_the_option_from_the_environment_is_checked(tmp_path: Path) -> None:
    """RECONCILE_ALLOWED_HOOK_HOSTS, space-separated as every list variable: a value that is
    not a host is a usage error (the option's own is in test_cli_errors)."""
    done = reconcile(
        "--local",
        str(tmp_path),
        "--dry-run",
        cwd=tmp_path,
        env={"RECONCILE_ALLOWED_HOOK_HOSTS": "hooks.example.com bad/host"},
    )
    assert done.returncode == 1 and "--allowed-hook-hosts" in done.stderr, done.stderr
