"""`manifests/preview-rbac`, the read-only identity of previews of changes not yet reviewed:
its roles and every example's preview role only read, and read what the example's controller
role does; the preview workflow runs with that credential and the base repository's webhook
hosts; and on the real control plane `reconcile --dry-run` previews an example under the
ServiceAccount's own token without a single refusal (the API server's audit log), while the
same token is refused every write, a real run's included."""

from __future__ import annotations

import contextlib
import functools
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile.cluster import AlreadyExists, NotFound
from reconcile.cluster.types import ResourceInfo
from reconcile.crds import CRD_FILES
from reconcile.objects.meta import metadata
from reconcile.specs.hook_hosts import host_allowed, parse_host_patterns
from tests.support.backends import Backend
from tests.support.cli import reconcile, says_refused
from tests.support.controlplane import PREVIEW_USER, ControlPlane
from tests.support.examples import EXAMPLES, load_example
from tests.support.kubectl import (
    aggregated_rules,
    kubectl,
    kustomize,
    one,
    service_account_kubeconfig,
)
from tests.support.mc_crds import ours_installed
from tests.support.poll import eventually

ROOT = Path(__file__).resolve().parents[2]
PREVIEW = ROOT / "manifests" / "preview-rbac"
WORKFLOW = ROOT / "github-actions" / "examples" / "preview.yml"
READ = {"get", "list", "watch"}
PREVIEWS_LABEL = "reconcile/aggregate-to-previews"
CONTROLLERS_LABEL = "reconcile/aggregate-to-controllers"
# every example's roles (the gitops example's are an admin's, beside its repository)
RBAC_FILES = [*sorted(EXAMPLES.glob("*/rbac.yaml")), EXAMPLES / "gitops" / "admin" / "rbac.yaml"]
Obj = dict[str, Any]


def granted(role: Obj) -> set[tuple[str, str, str]]:
    """(group, resource, verb) for every rule of a ClusterRole."""
    return {
        (group, resource, verb)
        for rule in role.get("rules") or []
        for group in rule.get("apiGroups") or []
        for resource in rule.get("resources") or []
        for verb in rule.get("verbs") or []
    }


def test_the_preview_roles_only_read() -> None:
    objects = kustomize(PREVIEW)
    assert sorted(o["kind"] for o in objects) == [
        "ClusterRole",
        "ClusterRole",
        "ClusterRoleBinding",
        "Namespace",
        "ServiceAccount",
    ]
    account = one(objects, "ServiceAccount")
    assert metadata(account) == {"name": "reconcile-preview", "namespace": "reconcile"}
    base = one(objects, "ClusterRole", "reconcile-preview-base")
    assert metadata(base)["labels"] == {PREVIEWS_LABEL: "true"}
    controllers = ("compositecontrollers", "decoratorcontrollers", "mapcontrollers")
    assert granted(base) == {
        *(
            ("metacontroller.k8s.io", resource, verb)
            for resource in (*controllers, "controllerrevisions")
            for verb in READ
        ),
        ("apiextensions.k8s.io", "customresourcedefinitions", "list"),
    }
    aggregated = one(objects, "ClusterRole", "reconcile-preview")
    assert aggregated["aggregationRule"] == {
        "clusterRoleSelectors": [{"matchLabels": {PREVIEWS_LABEL: "true"}}]
    }
    binding = one(objects, "ClusterRoleBinding")
    assert binding["roleRef"]["name"] == "reconcile-preview"
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "reconcile-preview", "namespace": "reconcile"}
    ]


@pytest.mark.parametrize("path", RBAC_FILES, ids=lambda p: str(p.relative_to(EXAMPLES).parent))
def test_every_example_ships_a_preview_role_that_reads_what_its_controller_does(
    path: Path,
) -> None:
    roles = [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
    (controller,) = [r for r in roles if metadata(r).get("labels") == {CONTROLLERS_LABEL: "true"}]
    (preview,) = [r for r in roles if metadata(r).get("labels") == {PREVIEWS_LABEL: "true"}]
    name = metadata(controller)["name"].removeprefix("reconcile-")
    assert metadata(preview)["name"] == f"reconcile-preview-{name}"
    assert {verb for _, _, verb in granted(preview)} == READ
    # the same types (a status subresource comes with its object), every one readable
    types = {(g, r) for g, r, _ in granted(controller) if "/" not in r}
    assert granted(preview) == {(g, r, verb) for g, r in types for verb in READ}


def test_the_preview_workflow_runs_with_the_read_only_credential_and_the_base_hosts() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    # the job's token may read the repository and comment on the pull request, nothing else
    assert workflow["permissions"] == {"contents": "read", "pull-requests": "write"}
    (step,) = [s for s in workflow["jobs"]["preview"]["steps"] if "uses" in s]
    assert step["with"]["kubeconfig"] == "${{ secrets.PREVIEW_KUBECONFIG }}"
    assert step["with"]["dry-run"] == "true" and "--allowed-hook-hosts" not in step["with"]["args"]
    # the hosts from the repository's settings; unset, a pattern no webhook's host matches
    hosts = re.fullmatch(
        r"\$\{\{ vars\.RECONCILE_ALLOWED_HOOK_HOSTS \|\| '([^']+)' \}\}",
        step["env"]["RECONCILE_ALLOWED_HOOK_HOSTS"],
    )
    assert hosts is not None
    unset = parse_host_patterns([hosts.group(1)])
    for url in ("http://127.0.0.1:8080/sync", "https://hooks.example.com/sync", "http://invalid/"):
        assert not host_allowed(url, unset)


@pytest.fixture
def preview_installed(control_plane: ControlPlane, live_backend: Backend) -> Iterator[None]:
    """The kustomization installed for real, with the hello-world example's roles and our CRDs
    (the controllers are read from the cluster)."""
    namespaces = live_backend.admin.discover("v1", "namespaces")
    # the CronJob test deletes the namespace `reconcile` when it ends: not while it goes
    eventually(
        functools.partial(_not_terminating, live_backend, namespaces, "reconcile"),
        what="the namespace reconcile not being deleted",
    )
    crds = live_backend.admin.discover("apiextensions.k8s.io/v1", "customresourcedefinitions")
    for crd in CRD_FILES:
        with contextlib.suppress(AlreadyExists):  # an earlier test installed them
            live_backend.admin.create(crds, yaml.safe_load(crd.read_text()))
    # ours, not Metacontroller's that an earlier test may have left: the example's command
    # hook is a field only ours keep
    ours_installed(live_backend)
    for kind in ("compositecontrollers", "decoratorcontrollers", "mapcontrollers"):
        eventually(
            functools.partial(live_backend.admin.discover, "metacontroller.k8s.io/v1alpha1", kind),
            what=f"{kind} served",
        )
    objects = kustomize(PREVIEW)
    kubectl(control_plane, "apply", "-f", "-", stdin=yaml.safe_dump_all(objects))
    kubectl(control_plane, "apply", "-f", str(EXAMPLES / "hello-world" / "rbac.yaml"))
    yield
    kubectl(
        control_plane,
        "delete",
        "--ignore-not-found",
        "--wait=false",
        "-n",
        "reconcile",
        "clusterrolebinding/reconcile-preview",
        "clusterrole/reconcile-preview",
        "clusterrole/reconcile-preview-base",
        "clusterrole/reconcile-preview-hello-world",
        "clusterrole/reconcile-hello-world",
        "serviceaccount/reconcile-preview",
    )


def _not_terminating(backend: Backend, namespaces: ResourceInfo, name: str) -> bool:
    try:
        return not metadata(backend.admin.get(namespaces, name)).get("deletionTimestamp")
    except NotFound:
        return True


@pytest.mark.controlplane
def test_a_preview_reads_everything_it_needs_and_may_write_nothing(
    control_plane: ControlPlane,
    live_backend: Backend,
    preview_installed: None,
    tmp_path: Path,
) -> None:
    rules = eventually(
        lambda: _readable(aggregated_rules(live_backend, "reconcile-preview")),
        what="the aggregated ClusterRole reconcile-preview with hello-world's types",
    )
    assert {verb for rule in rules for verb in rule["verbs"]} == READ
    files = ("crd.yaml", "hello.yaml", "controller.yaml")
    example = load_example(live_backend, "hello-world", *files)
    try:
        kubeconfig = service_account_kubeconfig(
            control_plane, tmp_path / "preview.kubeconfig", "reconcile-preview"
        )
        since = len(control_plane.audit_events(PREVIEW_USER))
        # as a pull request's preview runs it: the controller read from the cluster, its
        # command hook found from the working directory
        args = ("--kubeconfig", str(kubeconfig), "--controller", example.name("hello-controller"))
        cwd = EXAMPLES / "hello-world"
        preview = reconcile(*args, "--dry-run", "--report-format", "json", cwd=cwd)
        assert preview.returncode == 2, preview.stdout[-3000:] + preview.stderr[-3000:]
        report = json.loads(preview.stdout)
        assert report["errors"] == [] and report["outcome"] == "pending"
        assert not says_refused(preview.stderr)
        requests = control_plane.audit_events(PREVIEW_USER)[since:]
        assert requests, "the preview's requests are audited"
        refused = [e for e in requests if e["responseStatus"]["code"] >= 400]
        assert refused == []
        assert {e["verb"] for e in requests} <= {"get", "list"}
        listed = {e["objectRef"]["resource"] for e in requests if e["verb"] == "list"}
        assert listed >= {
            "compositecontrollers",
            "decoratorcontrollers",
            "mapcontrollers",
            "customresourcedefinitions",
            "helloworlds",
            "pods",
        }

        # the same token is refused any write: by kubectl, and as a real run
        namespace = example.name("hello")
        attempt = subprocess.run(
            ["kubectl", "--kubeconfig", str(kubeconfig), "create", "cm", "x", "-n", namespace],
            capture_output=True,
            text=True,
            check=False,
        )
        assert attempt.returncode != 0 and "forbidden" in attempt.stderr.lower()
        real = reconcile(*args, "--report-format", "json", cwd=cwd)
        assert real.returncode == 1, real.stdout[-3000:] + real.stderr[-3000:]
        assert "forbidden" in json.dumps(json.loads(real.stdout)["errors"]).lower()
        pods = live_backend.admin.discover("v1", "pods")
        with pytest.raises(NotFound):
            live_backend.admin.get(pods, "your-name", namespace=namespace)
    finally:
        example.cleanup()


def _readable(rules: list[Obj]) -> list[Obj]:
    """The rules, once the aggregation controller has gathered hello-world's preview role."""
    resources = {r for rule in rules for r in rule.get("resources") or []}
    if not {"compositecontrollers", "helloworlds", "pods"} <= resources:
        raise AssertionError(f"reconcile-preview grants {sorted(resources)} so far")
    return rules
