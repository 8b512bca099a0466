"""Metacontroller's own integration tests (`test/integration/composite/composite_test.go` and
`composite_v2_test.go` of metacontroller/metacontroller), ported: the same objects, hooks and
checks, on both backends, with `reconcile` in place of Metacontroller. Metacontroller's tests
wait until the cluster shows the result; a `reconcile` run ends converged, so the result is
checked when it returns. Each test names the Go test it ports."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reconcile.cluster import NotFound
from reconcile.cluster.types import Obj, ResourceInfo
from reconcile.objects.meta import metadata
from tests.support.backends import Backend
from tests.support.controllers import composite, run, webhook, write_controllers
from tests.support.hookserver import serve
from tests.support.mc_crds import OURS, crds_installed, created_as_stored


def crd_object(resource: ResourceInfo, name: str, **fields: Any) -> Obj:
    """`framework.UnstructuredCRD`: an object of the resource, named."""
    return {
        "apiVersion": resource.api_version,
        "kind": resource.kind,
        "metadata": {"name": name},
        **fields,
    }


def parent_of(resource: ResourceInfo, name: str, namespace: str, labels: dict[str, str]) -> Obj:
    obj = crd_object(resource, name, spec={"selector": {"matchLabels": labels}})
    obj["metadata"]["namespace"] = namespace
    return obj


def resync_hook(key: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The Go tests' TestResyncAfter hook (`key`: where the request holds the parent): set a
    status, then ask for a resync in 0.1 s, then report how long it took, then hold still."""
    state: dict[str, Any] = {"last": None, "done": False}

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        status = request[key].get("status")
        if status is None:
            return {"status": {}}
        if state["last"] is None:
            state["last"] = time.monotonic()
            return {"resyncAfterSeconds": 0.1}
        if not state["done"]:
            state["done"] = True
            return {"status": {"elapsedSeconds": time.monotonic() - state["last"]}}
        return {"status": status}

    return sync


def create_related_configmap(backend: Backend, namespace: str) -> None:
    """The Go tests' TestCustomizeWebhook ConfigMap, `related-config-map`."""
    configmaps = backend.admin.discover("v1", "configmaps")
    backend.admin.create(
        configmaps,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "related-config-map", "namespace": namespace},
            "data": {},
        },
    )


def customize(request: dict[str, Any]) -> dict[str, Any]:
    """The Go tests' customize hook: the related ConfigMap by the parent's namespace and name."""
    rule = {
        "apiVersion": "v1",
        "resource": "configmaps",
        "namespace": request["parent"]["metadata"]["namespace"],
        "names": ["related-config-map"],
    }
    return {"relatedResources": [rule]}


def test_sync_webhook(backend: Backend, namespace: str, tmp_path: Path) -> None:
    """TestSyncWebhook: a child with the parent's name."""
    labels = {"test": "test-sync-webhook"}
    parent_crd = backend.apply_crd("TestSyncWebhookParent")
    child_crd = backend.apply_crd("TestSyncWebhookChild")

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        child = crd_object(child_crd, request["parent"]["metadata"]["name"])
        child["metadata"]["labels"] = labels
        return {"children": [child]}

    with serve(sync) as hook:
        controller = composite(
            "test-sync-webhook",
            parent_crd,
            [(child_crd.api_version, child_crd.resource, "OnDelete")],
            {"sync": webhook(hook.url)},
        )
        backend.admin.create(
            parent_crd, parent_of(parent_crd, "test-sync-webhook", namespace, labels)
        )
        result = run(backend, write_controllers(tmp_path, controller))
    assert result.errors == [], result.errors
    assert backend.admin.get(child_crd, "test-sync-webhook", namespace=namespace)


def test_cascading_delete(backend: Backend, namespace: str, tmp_path: Path) -> None:
    """TestCascadingDelete: a Job child (whose server-side default deletion is not cascading)
    is deleted when the hook stops asking for it, and nothing keeps it (no GC finalizer)."""
    labels = {"test": "test-cascading-delete"}
    parent_crd = backend.apply_crd("TestCascadingDeleteParent")
    jobs = backend.admin.discover("batch/v1", "jobs")

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        if int(request["parent"]["spec"].get("replicas") or 0) <= 0:
            return {}
        child = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "test-cascading-delete", "labels": labels},
            "spec": {
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "pi", "image": "perl"}],
                    }
                }
            },
        }
        return {"children": [child]}

    with serve(sync) as hook:
        controller = composite(
            "test-cascading-delete",
            parent_crd,
            [("batch/v1", "jobs", "OnDelete")],
            {"sync": webhook(hook.url)},
        )
        path = write_controllers(tmp_path, controller)
        parent = parent_of(parent_crd, "test-cascading-delete", namespace, labels)
        parent["spec"]["replicas"] = 1
        backend.admin.create(parent_crd, parent)
        assert run(backend, path).errors == []
        assert backend.admin.get(jobs, "test-cascading-delete", namespace=namespace)
        current = backend.admin.get(parent_crd, "test-cascading-delete", namespace=namespace)
        current["spec"]["replicas"] = 0  # the Go test's AtomicUpdate
        backend.admin.update(parent_crd, current)
        assert run(backend, path).errors == []
    with pytest.raises(NotFound):
        backend.admin.get(jobs, "test-cascading-delete", namespace=namespace)


def test_resync_after(backend: Backend, namespace: str, tmp_path: Path) -> None:
    """TestResyncAfter: `resyncAfterSeconds: 0.1` brings the next sync within a second (a
    run honours it by another pass before it ends)."""
    labels = {"test": "test-sync-after"}
    parent_crd = backend.apply_crd("TestResyncAfterParent")
    sync = resync_hook("parent")

    with serve(sync) as hook:
        controller = composite("test-resync-after", parent_crd, [], {"sync": webhook(hook.url)})
        backend.admin.create(
            parent_crd, parent_of(parent_crd, "test-resync-after", namespace, labels)
        )
        result = run(backend, write_controllers(tmp_path, controller), max_duration=10.0)
    assert result.errors == [], result.errors
    parent = backend.admin.get(parent_crd, "test-resync-after", namespace=namespace)
    assert parent["status"]["elapsedSeconds"] <= 1.0


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_customize_webhook(backend: Backend, namespace: str, tmp_path: Path, version: str) -> None:
    """TestCustomizeWebhook and TestCustomizeWebhookV2: the customize hook names a ConfigMap
    by namespace and name; the sync hook sees it as related and names a child after it."""
    labels = {"test": "test-customize-webhook"}
    parent_crd = backend.apply_crd("TestCustomizeWebhookParent")
    child_crd = backend.apply_crd("TestCustomizeWebhookChild")
    create_related_configmap(backend, namespace)

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        related = [o for objects in request["related"].values() for o in objects.values()]
        if not related:
            return {"children": []}
        name = f"{request['parent']['metadata']['name']}-{related[0]['metadata']['name']}"
        child = crd_object(child_crd, name)
        child["metadata"]["labels"] = labels
        return {"children": [child]}

    with serve(sync) as sync_hook, serve(customize) as customize_hook:
        hooks = {
            "sync": {**webhook(sync_hook.url), "version": version},
            "customize": {**webhook(customize_hook.url), "version": version},
        }
        controller = composite(
            "test-customize-webhook",
            parent_crd,
            [(child_crd.api_version, child_crd.resource, "OnDelete")],
            hooks,
        )
        backend.admin.create(
            parent_crd, parent_of(parent_crd, "test-customize-webhook", namespace, labels)
        )
        result = run(backend, write_controllers(tmp_path, controller))
        keys = set(sync_hook.requests[-1]["related"]["ConfigMap.v1"])
    assert result.errors == [], result.errors
    assert backend.admin.get(
        child_crd, "test-customize-webhook-related-config-map", namespace=namespace
    )
    assert keys == (
        {"related-config-map"} if version == "v1" else {f"{namespace}/related-config-map"}
    )


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_sync_webhook_children_keys(
    backend: Backend, namespace: str, tmp_path: Path, version: str
) -> None:
    """TestSyncWebhookV2: the child is created, and the next request keys it as the version
    keys it (`name`, or `namespace/name` in v2)."""
    labels = {"test": "test-sync-webhook-v2"}
    parent_crd = backend.apply_crd("TestSyncWebhookParent")
    child_crd = backend.apply_crd("TestSyncWebhookChild")

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        child = crd_object(child_crd, request["parent"]["metadata"]["name"])
        child["metadata"]["labels"] = labels
        return {"children": [child]}

    with serve(sync) as hook:
        controller = composite(
            "test-sync-webhook-v2",
            parent_crd,
            [(child_crd.api_version, child_crd.resource, "OnDelete")],
            {"sync": {**webhook(hook.url), "version": version}},
        )
        backend.admin.create(parent_crd, parent_of(parent_crd, "p", namespace, labels))
        result = run(backend, write_controllers(tmp_path, controller))
        children = hook.requests[-1]["children"][f"{child_crd.kind}.{child_crd.api_version}"]
    assert result.errors == [], result.errors
    assert set(children) == ({"p"} if version == "v1" else {f"{namespace}/p"})


def test_fail_if_no_status_subresource_in_parent_crd(backend: Backend, namespace: str) -> None:
    """TestFailIfNoStatusSubresourceInParentCRD: a Warning Event (in `default`, on the
    controller object) says the parent CRD does not have subresource 'Status' enabled."""
    parent_crd = backend.apply_crd("TestSyncWebhookParent", status=False)
    child_crd = backend.apply_crd("TestSyncWebhookChild")
    with serve(lambda request: {}) as hook, crds_installed(backend, OURS) as controllers:
        name = f"no-status-{parent_crd.group.split('.')[0]}"
        controller = composite(
            name,
            parent_crd,
            [(child_crd.api_version, child_crd.resource, "OnDelete")],
            {"sync": webhook(hook.url)},
        )
        created_as_stored(backend, controllers, controller, "spec.hooks.sync")
        backend.admin.create(
            parent_crd, parent_of(parent_crd, "test-sync-webhook", namespace, {"t": "x"})
        )
        try:
            result = run(backend, controllers_from_cluster=True, only_controllers=frozenset({name}))
        finally:
            backend.delete_quietly(controllers, name, None)
    assert any("does not have subresource 'Status' enabled" in e for e in result.errors)
    events = backend.admin.discover("v1", "events")
    messages = [
        str(e.get("message")) for e in backend.admin.list(events, namespace="default").items
    ]
    assert any("does not have subresource 'Status' enabled" in m for m in messages)


def test_claim_and_orphan_children(backend: Backend, namespace: str, tmp_path: Path) -> None:
    """TestClaimAndOrphanChildren: an orphan matching the selector is adopted; once its labels
    no longer match, it is released (its controller reference removed) and left alone."""
    matching, not_matching = {"test": "test-claim-orphan-children"}, {"test": "no-match"}
    parent_crd = backend.apply_crd("TestClaimOrphanParent")
    child_crd = backend.apply_crd("TestClaimOrphanChild")
    release = {"on": False}

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        if release["on"]:
            return {}
        child = crd_object(child_crd, "pre-existing-child")
        child["metadata"]["labels"] = matching
        return {"children": [child]}

    orphan = crd_object(child_crd, "pre-existing-child")
    orphan["metadata"].update(labels=matching, namespace=namespace)
    backend.admin.create(child_crd, orphan)
    with serve(sync) as hook:
        controller = composite(
            "test-claim-orphan-children",
            parent_crd,
            [(child_crd.api_version, child_crd.resource, "OnDelete")],
            {"sync": webhook(hook.url)},
        )
        path = write_controllers(tmp_path, controller)
        backend.admin.create(
            parent_crd, parent_of(parent_crd, "test-claim-orphan-children", namespace, matching)
        )
        assert run(backend, path).errors == []
        adopted = backend.admin.get(child_crd, "pre-existing-child", namespace=namespace)
        assert [r.get("controller") for r in metadata(adopted)["ownerReferences"]] == [True]
        release["on"] = True
        metadata(adopted)["labels"] = not_matching
        backend.admin.update(child_crd, adopted)
        assert run(backend, path).errors == []
    released = backend.admin.get(child_crd, "pre-existing-child", namespace=namespace)
    assert not metadata(released).get("ownerReferences")


# -- decorator/decorator_test.go, decorator_v2_test.go ------------------------------------------


def decorator_controller(
    name: str, target: ResourceInfo, attachments: list[ResourceInfo], hooks: dict[str, Any]
) -> Obj:
    """`framework.CreateDecoratorController`: one resource rule, attachments updated InPlace."""
    return {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "DecoratorController",
        "metadata": {"name": name},
        "spec": {
            "resources": [{"apiVersion": target.api_version, "resource": target.resource}],
            "attachments": [
                {"apiVersion": a.api_version, "resource": a.resource} for a in attachments
            ],
            "hooks": hooks,
        },
    }


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_decorator_sync_webhook(
    backend: Backend, namespace: str, tmp_path: Path, version: str
) -> None:
    """decorator TestSyncWebhook and TestSyncWebhookV2: an attachment named after the target,
    keyed in the next request as the version keys it."""
    parent_crd = backend.apply_crd("Parent")
    child_crd = backend.apply_crd("Child")

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        child = crd_object(child_crd, request["object"]["metadata"]["name"])
        child["metadata"]["labels"] = {"test": "test"}
        return {"attachments": [child]}

    with serve(sync) as hook:
        controller = decorator_controller(
            "dc", parent_crd, [child_crd], {"sync": {**webhook(hook.url), "version": version}}
        )
        backend.admin.create(
            parent_crd, parent_of(parent_crd, "test-sync-webhook", namespace, {"test": "test"})
        )
        result = run(backend, write_controllers(tmp_path, controller))
        attachments = hook.requests[-1]["attachments"][f"{child_crd.kind}.{child_crd.api_version}"]
    assert result.errors == [], result.errors
    assert backend.admin.get(child_crd, "test-sync-webhook", namespace=namespace)
    expected = "test-sync-webhook" if version == "v1" else f"{namespace}/test-sync-webhook"
    assert set(attachments) == {expected}


def test_decorator_resync_after(backend: Backend, namespace: str, tmp_path: Path) -> None:
    """decorator TestResyncAfter: the next sync comes within a second."""
    parent_crd = backend.apply_crd("TestResyncAfterParent")
    sync = resync_hook("object")

    with serve(sync) as hook:
        controller = decorator_controller(
            "test-resync-after", parent_crd, [], {"sync": webhook(hook.url)}
        )
        backend.admin.create(
            parent_crd, parent_of(parent_crd, "test-resync-after", namespace, {"t": "x"})
        )
        result = run(backend, write_controllers(tmp_path, controller), max_duration=10.0)
    assert result.errors == [], result.errors
    parent = backend.admin.get(parent_crd, "test-resync-after", namespace=namespace)
    assert parent["status"]["elapsedSeconds"] <= 1.0


def test_decorator_customize_webhook(backend: Backend, namespace: str, tmp_path: Path) -> None:
    """decorator TestCustomizeWebhook: the customize hook's related ConfigMap names the
    attachment."""
    parent_crd = backend.apply_crd("Parent")
    child_crd = backend.apply_crd("Child")
    create_related_configmap(backend, namespace)

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        related = [o for objects in request["related"].values() for o in objects.values()]
        if not related:
            return {"attachments": []}
        name = f"{request['object']['metadata']['name']}-{related[0]['metadata']['name']}"
        return {"attachments": [crd_object(child_crd, name)]}

    with serve(sync) as sync_hook, serve(customize) as customize_hook:
        hooks = {"sync": webhook(sync_hook.url), "customize": webhook(customize_hook.url)}
        controller = decorator_controller("dc-customize", parent_crd, [child_crd], hooks)
        backend.admin.create(
            parent_crd, parent_of(parent_crd, "test-customize-webhook", namespace, {"t": "x"})
        )
        result = run(backend, write_controllers(tmp_path, controller))
    assert result.errors == [], result.errors
    assert backend.admin.get(
        child_crd, "test-customize-webhook-related-config-map", namespace=namespace
    )
