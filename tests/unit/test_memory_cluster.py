"""Memory-backend details the cross-backend contract suite does not cover (or cannot, because
they depend on timing the real cluster does not promise)."""

from __future__ import annotations

import base64
import json
import os
import re
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile.cluster.errors import (
    AlreadyExists,
    BadRequest,
    Conflict,
    Forbidden,
    Invalid,
    MethodNotAllowed,
    NotFound,
)
from reconcile.cluster.memory import MemoryCluster
from reconcile.cluster.protocol import list_all
from reconcile.cluster.types import Obj, Propagation, ResourceInfo
from reconcile.files.seed import ManifestError, load_manifests
from reconcile.job.output_dir import prepare_output_dir
from tests.support.dumps import dump_objects

START = datetime(2021, 3, 4, 5, 6, 7, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


def pod_spec(**extra: Any) -> Obj:
    return {"containers": [{"name": "c", "image": "busybox"}], **extra}


def deployment_spec(**extra: Any) -> Obj:
    return {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "d"}},
        "template": {"metadata": {"labels": {"app": "d"}}, "spec": pod_spec()},
        **extra,
    }


def widget_crd(
    *,
    status: bool = True,
    scope: str = "Namespaced",
    versions: tuple[str, ...] = ("v1",),
    name: str = "widgets.example.com",
) -> Obj:
    version_list: list[dict[str, Any]] = []
    for i, version in enumerate(versions):
        entry: dict[str, Any] = {
            "name": version,
            "served": True,
            "storage": i == 0,
            "schema": {
                "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
            },
        }
        if status:
            entry["subresources"] = {"status": {}}
        version_list.append(entry)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": {
            "group": "example.com",
            "scope": scope,
            "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
            "versions": version_list,
        },
    }


def cm(name: str, namespace: str = "default", **meta: Any) -> Obj:
    return {"metadata": {"name": name, "namespace": namespace, **meta}, "data": {"k": "v"}}


def owner_ref(owner: Obj, *, block: bool = False, controller: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "blockOwnerDeletion": block,
        "controller": controller,
    }


@pytest.fixture
def cluster() -> MemoryCluster:
    return MemoryCluster(clock=Clock())


def res(cluster: MemoryCluster, api_version: str, name: str) -> ResourceInfo:
    return cluster.discover(api_version, name)


def configmaps(cluster: MemoryCluster) -> ResourceInfo:
    return res(cluster, "v1", "configmaps")


def with_widgets(cluster: MemoryCluster, **kwargs: Any) -> ResourceInfo:
    cluster.create(
        res(cluster, "apiextensions.k8s.io/v1", "customresourcedefinitions"), widget_crd(**kwargs)
    )
    return res(cluster, "example.com/v1", "widgets")


def names(items: list[Obj]) -> list[str]:
    return [o["metadata"]["name"] for o in items]


def exists(cluster: MemoryCluster, resource: ResourceInfo, name: str, ns: str | None) -> bool:
    try:
        cluster.get(resource, name, namespace=ns)
    except NotFound:
        return False
    return True


# --- start, discovery ------------------------------------------------------------------------


def test_starts_with_the_builtin_namespaces(cluster: MemoryCluster) -> None:
    namespaces = cluster.list(res(cluster, "v1", "namespaces")).items
    assert names(namespaces) == ["default", "kube-node-lease", "kube-public", "kube-system"]
    for ns in namespaces:
        assert ns["status"] == {"phase": "Active"}
        assert ns["spec"] == {"finalizers": ["kubernetes"]}
        assert ns["metadata"]["creationTimestamp"] == "2021-03-04T05:06:07Z"


def test_discovery_by_plural_singular_and_kind_is_not_counted(cluster: MemoryCluster) -> None:
    by_plural = cluster.discover("apps/v1", "deployments")
    assert cluster.discover("apps/v1", "deployment") == by_plural
    assert cluster.discover("apps/v1", "Deployment") == by_plural
    assert by_plural.namespaced and by_plural.has_status
    assert not cluster.discover("v1", "namespaces").namespaced
    with pytest.raises(NotFound) as err:
        cluster.discover("apps/v1", "deployment2")
    assert "apps/v1" in err.value.message and "deployment2" in err.value.message
    assert cluster.discover("apps/v1", "deploy") == by_plural  # short names too, like live
    assert cluster.stats.total == 0


# --- create ----------------------------------------------------------------------------------


def test_create_sets_server_fields_and_generation_where_tracked(cluster: MemoryCluster) -> None:
    created = cluster.create(configmaps(cluster), cm("a", uid="mine", generation=7))
    meta = created["metadata"]
    assert meta["uid"] != "mine" and len(meta["uid"]) == 36
    assert meta["creationTimestamp"] == "2021-03-04T05:06:07Z"
    assert int(meta["resourceVersion"]) > 0
    assert "generation" not in meta
    assert created["apiVersion"] == "v1" and created["kind"] == "ConfigMap"
    deploy = cluster.create(
        res(cluster, "apps/v1", "deployments"),
        {"metadata": {"name": "d", "namespace": "default"}, "spec": deployment_spec()},
    )
    assert deploy["metadata"]["generation"] == 1
    widgets = with_widgets(cluster)
    widget = cluster.create(widgets, {"metadata": {"name": "w", "namespace": "default"}})
    assert widget["metadata"]["generation"] == 1


def test_resource_versions_increase_on_every_write(cluster: MemoryCluster) -> None:
    a = cluster.create(configmaps(cluster), cm("a"))
    b = cluster.create(configmaps(cluster), cm("b"))
    assert int(b["metadata"]["resourceVersion"]) > int(a["metadata"]["resourceVersion"])
    assert cluster.list(configmaps(cluster)).resource_version == b["metadata"]["resourceVersion"]


def test_generate_name(cluster: MemoryCluster) -> None:
    created = cluster.create(
        configmaps(cluster), {"metadata": {"generateName": "job-", "namespace": "default"}}
    )
    name = created["metadata"]["name"]
    assert name.startswith("job-") and len(name) == len("job-") + 5
    assert all(c in "bcdfghjklmnpqrstvwxz2456789" for c in name[4:])


@pytest.mark.parametrize(
    ("api_version", "resource", "name", "ok"),
    [
        ("v1", "configmaps", "a.b-c", True),
        ("v1", "configmaps", "Bad", False),
        ("v1", "configmaps", "x" * 254, False),
        ("v1", "namespaces", "a.b", False),
        ("v1", "namespaces", "x" * 64, False),
        ("v1", "services", "1abc", False),
        ("v1", "services", "abc-1", True),
        ("rbac.authorization.k8s.io/v1", "clusterroles", "system:controller:x", True),
        ("rbac.authorization.k8s.io/v1", "clusterroles", "a/b", False),
    ],
)
def test_name_validation(
    cluster: MemoryCluster, api_version: str, resource: str, name: str, ok: bool
) -> None:
    info = res(cluster, api_version, resource)
    body: Obj = {"metadata": {"name": name}}
    if info.namespaced:
        body["metadata"]["namespace"] = "default"
    if resource == "services":
        body["spec"] = {"ports": [{"port": 80}]}
    if ok:
        cluster.create(info, body)
        return
    with pytest.raises(Invalid) as err:
        cluster.create(info, body)
    assert f'metadata.name: Invalid value: "{name}"' in err.value.message
    assert err.value.reason == "Invalid" and err.value.status == 422


def test_missing_name_and_other_create_refusals(cluster: MemoryCluster) -> None:
    cms = configmaps(cluster)
    with pytest.raises(Invalid, match="name or generateName is required"):
        cluster.create(cms, {"metadata": {"namespace": "default"}})
    with pytest.raises(BadRequest, match=r"metadata\.namespace is required"):
        cluster.create(cms, {"metadata": {"name": "a"}})
    with pytest.raises(NotFound) as missing:
        cluster.create(cms, cm("a", namespace="nope"))
    assert missing.value.message == 'namespaces "nope" not found'
    with pytest.raises(BadRequest, match="does not match"):
        cluster.create(cms, {"apiVersion": "v1", "kind": "Secret", **cm("a")})
    with pytest.raises(BadRequest, match="does not match"):
        cluster.create(cms, {"apiVersion": "apps/v1", **cm("a")})
    with pytest.raises(Invalid, match=r"metadata\.labels"):
        cluster.create(cms, cm("a", labels={"k": "not ok!"}))
    with pytest.raises(Invalid, match="uid must not be empty"):
        cluster.create(
            cms, cm("a", ownerReferences=[{"apiVersion": "v1", "kind": "ConfigMap", "name": "x"}])
        )
    cluster.create(cms, cm("a"))
    with pytest.raises(AlreadyExists) as dup:
        cluster.create(cms, cm("a"))
    assert dup.value.message == 'configmaps "a" already exists'
    assert (dup.value.reason, dup.value.status) == ("AlreadyExists", 409)


def test_cluster_scoped_objects_lose_their_namespace(cluster: MemoryCluster) -> None:
    created = cluster.create(
        res(cluster, "rbac.authorization.k8s.io/v1", "clusterroles"),
        {"metadata": {"name": "r", "namespace": "default"}},
    )
    assert "namespace" not in created["metadata"]


def test_objects_are_copied_in_and_out(cluster: MemoryCluster) -> None:
    cms = configmaps(cluster)
    body = cm("a")
    created = cluster.create(cms, body)
    body["data"]["k"] = "changed"
    created["data"]["k"] = "changed too"
    fetched = cluster.get(cms, "a", namespace="default")
    assert fetched["data"] == {"k": "v"}
    fetched["metadata"]["labels"] = {"x": "y"}
    assert "labels" not in cluster.list(cms).items[0]["metadata"]
    assert "uid" not in body["metadata"]  # the caller's dict is not written to


# --- update, status, generation --------------------------------------------------------------


def test_update_preconditions_and_server_fields(cluster: MemoryCluster) -> None:
    cms = configmaps(cluster)
    created = cluster.create(cms, cm("a"))
    stale = dict(created, data={"k": "1"})
    updated = cluster.update(cms, stale)
    with pytest.raises(Conflict) as conflict:
        cluster.update(cms, dict(stale, data={"k": "2"}))
    assert conflict.value.message == (
        'Operation cannot be fulfilled on configmaps "a": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    unconditional = {"metadata": {"name": "a", "namespace": "default"}, "data": {"k": "3"}}
    after = cluster.update(cms, unconditional)
    assert after["data"] == {"k": "3"}
    assert after["metadata"]["uid"] == created["metadata"]["uid"]
    assert after["metadata"]["creationTimestamp"] == created["metadata"]["creationTimestamp"]
    wrong_uid = {"metadata": {"name": "a", "namespace": "default", "uid": "other"}}
    with pytest.raises(Conflict, match="Precondition failed: UID in precondition: other"):
        cluster.update(cms, wrong_uid)
    forged = dict(after)
    forged["metadata"] = dict(after["metadata"], creationTimestamp="1999-01-01T00:00:00Z")
    forged["metadata"]["deletionTimestamp"] = "1999-01-01T00:00:00Z"
    kept = cluster.update(cms, forged)
    assert kept["metadata"]["creationTimestamp"] == "2021-03-04T05:06:07Z"
    assert "deletionTimestamp" not in kept["metadata"]
    assert int(updated["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    with pytest.raises(NotFound, match='configmaps "zz" not found'):
        cluster.update(cms, cm("zz"))


def test_a_no_op_update_keeps_the_resource_version(cluster: MemoryCluster) -> None:
    cms = configmaps(cluster)
    created = cluster.create(cms, cm("a"))
    again = cluster.update(cms, created)
    assert again == created
    assert cluster.resource_version == created["metadata"]["resourceVersion"]


def test_status_subresource_split(cluster: MemoryCluster) -> None:
    widgets = with_widgets(cluster)
    body = {"metadata": {"name": "w", "namespace": "default"}, "spec": {"a": 1}, "status": {"s": 1}}
    created = cluster.create(widgets, body)
    assert "status" not in created
    created["status"] = {"s": 2}
    created["metadata"]["labels"] = {"l": "1"}
    updated = cluster.update(widgets, created)
    assert "status" not in updated and updated["metadata"]["labels"] == {"l": "1"}
    assert updated["metadata"]["generation"] == 1
    updated["status"] = {"s": 3}
    updated["spec"] = {"a": 99}
    updated["metadata"]["labels"] = {"l": "2"}
    with_status = cluster.update_status(widgets, updated)
    assert with_status["status"] == {"s": 3}
    assert with_status["spec"] == {"a": 1}
    assert with_status["metadata"]["labels"] == {"l": "1"}
    assert with_status["metadata"]["generation"] == 1
    assert int(with_status["metadata"]["resourceVersion"]) > int(
        updated["metadata"]["resourceVersion"]
    )
    assert cluster.stats.count("update", "widgets.example.com/status") == 1
    with pytest.raises(Conflict):
        cluster.update_status(widgets, updated)  # stale resourceVersion


def test_status_is_plain_data_without_the_subresource(cluster: MemoryCluster) -> None:
    widgets = with_widgets(cluster, status=False)
    created = cluster.create(
        widgets, {"metadata": {"name": "w", "namespace": "default"}, "status": {"s": 1}}
    )
    assert created["status"] == {"s": 1}
    created["status"] = {"s": 2}
    updated = cluster.update(widgets, created)
    assert updated["status"] == {"s": 2} and updated["metadata"]["generation"] == 2
    with pytest.raises(NotFound):
        cluster.update_status(widgets, updated)
    cms = configmaps(cluster)
    cluster.create(cms, cm("a"))
    with pytest.raises(NotFound):
        cluster.update_status(cms, cm("a"))
    assert cluster.stats.count("update", "configmaps/status") == 1


def test_generation_counts_spec_changes_only(cluster: MemoryCluster) -> None:
    deployments = res(cluster, "apps/v1", "deployments")
    d = cluster.create(
        deployments, {"metadata": {"name": "d", "namespace": "default"}, "spec": deployment_spec()}
    )
    d["metadata"]["labels"] = {"a": "b"}
    d = cluster.update(deployments, d)
    assert d["metadata"]["generation"] == 1
    d["spec"]["replicas"] = 2
    d = cluster.update(deployments, d)
    assert d["metadata"]["generation"] == 2
    d["metadata"]["annotations"] = {"note": "x"}  # deployments count annotations too
    d = cluster.update(deployments, d)
    assert d["metadata"]["generation"] == 3
    d["status"] = {"replicas": 2}
    d = cluster.update_status(deployments, d)
    assert d["metadata"]["generation"] == 3 and d["status"] == {"replicas": 2}
    d["metadata"]["generation"] = 42
    assert cluster.update(deployments, d)["metadata"]["generation"] == 3


# --- finalizers and deletion -----------------------------------------------------------------


def test_finalizers_hold_an_object_until_removed(cluster: MemoryCluster) -> None:
    cms = configmaps(cluster)
    cluster.create(cms, cm("a", finalizers=["example.com/hold"]))
    cluster.delete(cms, "a", namespace="default")
    held = cluster.get(cms, "a", namespace="default")
    assert held["metadata"]["deletionTimestamp"] == "2021-03-04T05:06:07Z"
    assert held["metadata"]["deletionGracePeriodSeconds"] == 0
    cluster.delete(cms, "a", namespace="default")  # a no-op
    assert cluster.get(cms, "a", namespace="default") == held
    more = dict(held)
    more["metadata"] = dict(held["metadata"], finalizers=["example.com/hold", "example.com/new"])
    with pytest.raises(Invalid, match="no new finalizers can be added"):
        cluster.update(cms, more)
    held["metadata"]["labels"] = {"still": "updatable"}
    held = cluster.update(cms, held)
    held["metadata"]["finalizers"] = []
    cluster.update(cms, held)
    assert not exists(cluster, cms, "a", "default")


def test_delete_preconditions(cluster: MemoryCluster) -> None:
    cms = configmaps(cluster)
    created = cluster.create(cms, cm("a"))
    with pytest.raises(Conflict, match="Precondition failed: UID in precondition: nope"):
        cluster.delete(cms, "a", namespace="default", uid="nope")
    with pytest.raises(Conflict, match="ResourceVersion in precondition: 1,"):
        cluster.delete(cms, "a", namespace="default", resource_version="1")
    cluster.delete(
        cms,
        "a",
        namespace="default",
        uid=created["metadata"]["uid"],
        resource_version=created["metadata"]["resourceVersion"],
    )
    with pytest.raises(NotFound, match='configmaps "a" not found'):
        cluster.delete(cms, "a", namespace="default")


def test_pods_go_at_once(cluster: MemoryCluster) -> None:
    pods = res(cluster, "v1", "pods")
    cluster.create(
        pods, {"metadata": {"name": "p", "namespace": "default"}, "spec": pod_spec(nodeName="n")}
    )
    cluster.delete(pods, "p", namespace="default")
    assert not exists(cluster, pods, "p", "default")


# --- garbage collection ----------------------------------------------------------------------


def test_background_deletion_collects_dependents_recursively(cluster: MemoryCluster) -> None:
    cms = configmaps(cluster)
    parent = cluster.create(cms, cm("parent"))
    other = cluster.create(cms, cm("other"))
    child = cluster.create(cms, cm("child", ownerReferences=[owner_ref(parent)]))
    cluster.create(cms, cm("grandchild", ownerReferences=[owner_ref(child)]))
    cluster.create(cms, cm("shared", ownerReferences=[owner_ref(parent), owner_ref(other)]))
    cluster.create(
        cms, cm("held", ownerReferences=[owner_ref(parent)], finalizers=["example.com/x"])
    )
    cluster.delete(cms, "parent", namespace="default")
    assert names(cluster.list(cms).items) == ["held", "other", "shared"]
    shared = cluster.get(cms, "shared", namespace="default")
    assert [r["name"] for r in shared["metadata"]["ownerReferences"]] == ["other"]
    held = cluster.get(cms, "held", namespace="default")
    assert held["metadata"]["deletionTimestamp"]


def test_an_owner_held_by_a_finalizer_keeps_its_dependents(cluster: MemoryCluster) -> None:
    cms = configmaps(cluster)
    parent = cluster.create(cms, cm("parent", finalizers=["example.com/x"]))
    cluster.create(cms, cm("child", ownerReferences=[owner_ref(parent)]))
    cluster.delete(cms, "parent", namespace="default")
    assert exists(cluster, cms, "child", "default")
    parent = cluster.get(cms, "parent", namespace="default")
    parent["metadata"]["finalizers"] = []
    cluster.update(cms, parent)
    assert names(cluster.list(cms).items) == []


def test_foreground_deletion_waits_for_blocking_dependents(cluster: MemoryCluster) -> None:
    cms = configmaps(cluster)
    parent = cluster.create(cms, cm("parent"))
    cluster.create(
        cms,
        cm("blocker", ownerReferences=[owner_ref(parent, block=True)], finalizers=["x.io/f"]),
    )
    cluster.create(cms, cm("plain", ownerReferences=[owner_ref(parent)]))
    cluster.delete(cms, "parent", namespace="default", propagation=Propagation.FOREGROUND)
    waiting = cluster.get(cms, "parent", namespace="default")
    assert waiting["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert waiting["metadata"]["deletionTimestamp"]
    assert not exists(cluster, cms, "plain", "default")
    blocker = cluster.get(cms, "blocker", namespace="default")
    assert blocker["metadata"]["deletionTimestamp"]
    blocker["metadata"]["finalizers"] = []
    cluster.update(cms, blocker)
    assert names(cluster.list(cms).items) == []


def test_foreground_deletion_without_blockers_is_immediate(cluster: MemoryCluster) -> None:
    cms = configmaps(cluster)
    parent = cluster.create(cms, cm("parent"))
    cluster.create(cms, cm("child", ownerReferences=[owner_ref(parent, block=True)]))
    cluster.delete(cms, "parent", namespace="default", propagation=Propagation.FOREGROUND)
    assert names(cluster.list(cms).items) == []


def test_orphan_deletion_keeps_dependents(cluster: MemoryCluster) -> None:
    cms = configmaps(cluster)
    parent = cluster.create(cms, cm("parent"))
    other = cluster.create(cms, cm("other"))
    cluster.create(cms, cm("child", ownerReferences=[owner_ref(parent, controller=True)]))
    cluster.create(cms, cm("both", ownerReferences=[owner_ref(parent), owner_ref(other)]))
    cluster.delete(cms, "parent", namespace="default", propagation=Propagation.ORPHAN)
    assert names(cluster.list(cms).items) == ["both", "child", "other"]
    assert "ownerReferences" not in cluster.get(cms, "child", namespace="default")["metadata"]
    both = cluster.get(cms, "both", namespace="default")
    assert [r["name"] for r in both["metadata"]["ownerReferences"]] == ["other"]


def test_owners_resolve_by_uid_within_the_namespace(cluster: MemoryCluster) -> None:
    cms = configmaps(cluster)
    namespaces = res(cluster, "v1", "namespaces")
    cluster.create(namespaces, {"metadata": {"name": "other"}})
    parent = cluster.create(cms, cm("parent"))
    cluster_owner = cluster.create(
        res(cluster, "rbac.authorization.k8s.io/v1", "clusterroles"), {"metadata": {"name": "r"}}
    )
    cluster.create(cms, cm("cross", namespace="other", ownerReferences=[owner_ref(parent)]))
    cluster.create(
        cms, cm("by-cluster", namespace="other", ownerReferences=[owner_ref(cluster_owner)])
    )
    bogus = dict(owner_ref(parent), uid="00000000-0000-0000-0000-000000000000")
    cluster.create(cms, cm("dangling", ownerReferences=[bogus]))
    # a namespaced dependent's owner must be in its namespace: the others are collected at once
    assert names(cluster.list(cms).items) == ["parent", "by-cluster"]


def test_gc_writes_are_not_counted_as_requests(cluster: MemoryCluster) -> None:
    cms = configmaps(cluster)
    parent = cluster.create(cms, cm("parent"))
    for i in range(3):
        cluster.create(cms, cm(f"c{i}", ownerReferences=[owner_ref(parent)]))
    cluster.stats.reset()
    cluster.delete(cms, "parent", namespace="default")
    assert cluster.stats.by_verb() == {"delete": 1}


# --- namespaces ------------------------------------------------------------------------------


def test_namespace_deletion(cluster: MemoryCluster) -> None:
    namespaces = res(cluster, "v1", "namespaces")
    cms = configmaps(cluster)
    cluster.create(namespaces, {"metadata": {"name": "team"}})
    cluster.create(cms, cm("a", namespace="team"))
    cluster.create(cms, cm("held", namespace="team", finalizers=["example.com/f"]))
    cluster.create(cms, cm("outside"))
    cluster.delete(namespaces, "team")
    team = cluster.get(namespaces, "team")
    assert team["status"]["phase"] == "Terminating" and team["metadata"]["deletionTimestamp"]
    assert names(cluster.list(cms, namespace="team").items) == ["held"]
    with pytest.raises(Forbidden) as refused:
        cluster.create(cms, cm("new", namespace="team"))
    assert refused.value.message == (
        'configmaps "new" is forbidden: unable to create new content in namespace team '
        "because it is being terminated"
    )
    held = cluster.get(cms, "held", namespace="team")
    held["metadata"]["finalizers"] = []
    cluster.update(cms, held)
    assert not exists(cluster, namespaces, "team", None)
    assert names(cluster.list(cms).items) == ["outside"]


def test_builtin_namespaces_cannot_be_deleted(cluster: MemoryCluster) -> None:
    with pytest.raises(Forbidden, match="this namespace may not be deleted"):
        cluster.delete(res(cluster, "v1", "namespaces"), "default")


def test_namespace_updates_keep_spec_finalizers_and_status(cluster: MemoryCluster) -> None:
    namespaces = res(cluster, "v1", "namespaces")
    ns = cluster.create(namespaces, {"metadata": {"name": "x"}, "status": {"phase": "Bogus"}})
    assert ns["status"] == {"phase": "Active"}
    ns["spec"] = {}
    ns["metadata"]["labels"] = {"a": "b"}
    updated = cluster.update(namespaces, ns)
    assert updated["spec"] == {"finalizers": ["kubernetes"]}
    assert updated["status"] == {"phase": "Active"}


# --- custom resource definitions -------------------------------------------------------------


def test_crd_registration_and_status(cluster: MemoryCluster) -> None:
    crds = res(cluster, "apiextensions.k8s.io/v1", "CustomResourceDefinition")
    created = cluster.create(crds, widget_crd(versions=("v1", "v2")))
    conditions = {c["type"]: c["status"] for c in created["status"]["conditions"]}
    assert conditions == {"NamesAccepted": "True", "Established": "True"}
    assert created["status"]["storedVersions"] == ["v1"]
    assert created["spec"]["names"]["singular"] == "widget"
    assert created["spec"]["names"]["listKind"] == "WidgetList"
    assert created["metadata"]["generation"] == 1
    v1 = cluster.discover("example.com/v1", "Widget")
    v2 = cluster.discover("example.com/v2", "widget")
    assert v1.has_status and v1.namespaced and v1.short_names == ("wd",)
    cluster.create(v2, {"metadata": {"name": "w", "namespace": "default"}})
    assert cluster.get(v1, "w", namespace="default")["apiVersion"] == "example.com/v1"
    assert cluster.get(v2, "w", namespace="default")["apiVersion"] == "example.com/v2"
    assert [o["apiVersion"] for o in cluster.all_objects() if o["kind"] == "Widget"] == [
        "example.com/v1"
    ]
    with pytest.raises(BadRequest):
        cluster.create(v1, {"apiVersion": "example.com/v2", **cm("x")})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda c: c["metadata"].update(name="x.example.com"),
            'metadata.name: Invalid value: "x.example.com": must be spec.names.plural+"."+'
            "spec.group",
        ),
        (lambda c: c["spec"].pop("group"), "spec.group: Required value"),
        (lambda c: c["spec"].pop("scope"), "spec.scope: Required value"),
        (lambda c: c["spec"]["names"].pop("kind"), "spec.names.kind: Required value"),
        (lambda c: c["spec"]["names"].pop("plural"), "spec.names.plural: Required value"),
        (lambda c: c["spec"].update(versions=[]), "must have exactly one version marked"),
        (lambda c: c["spec"].update(scope="Global"), 'spec.scope: Unsupported value: "Global"'),
    ],
)
def test_crd_validation(cluster: MemoryCluster, change: Any, message: str) -> None:
    body = widget_crd()
    change(body)
    with pytest.raises(Invalid) as err:
        cluster.create(res(cluster, "apiextensions.k8s.io/v1", "customresourcedefinitions"), body)
    assert message in err.value.message


def test_deleting_a_crd_deletes_its_objects_and_unregisters_it(cluster: MemoryCluster) -> None:
    crds = res(cluster, "apiextensions.k8s.io/v1", "customresourcedefinitions")
    widgets = with_widgets(cluster)
    cluster.create(widgets, {"metadata": {"name": "a", "namespace": "default"}})
    cluster.create(
        widgets, {"metadata": {"name": "held", "namespace": "default", "finalizers": ["x.io/f"]}}
    )
    cluster.delete(crds, "widgets.example.com")
    definition = cluster.get(crds, "widgets.example.com")
    assert "customresourcecleanup.apiextensions.k8s.io" in definition["metadata"]["finalizers"]
    assert names(cluster.list(widgets).items) == ["held"]
    with pytest.raises(MethodNotAllowed):
        cluster.create(widgets, {"metadata": {"name": "new", "namespace": "default"}})
    held = cluster.get(widgets, "held", namespace="default")
    held["metadata"]["finalizers"] = []
    cluster.update(widgets, held)
    assert not exists(cluster, crds, "widgets.example.com", None)
    with pytest.raises(NotFound):
        cluster.discover("example.com/v1", "widgets")
    with pytest.raises(NotFound):
        cluster.list(widgets)
    # the same CRD again starts empty
    widgets = with_widgets(cluster)
    assert cluster.list(widgets).items == []


def test_cluster_scoped_custom_resources(cluster: MemoryCluster) -> None:
    widgets = with_widgets(cluster, scope="Cluster")
    assert not widgets.namespaced
    created = cluster.create(widgets, {"metadata": {"name": "w", "namespace": "ignored"}})
    assert "namespace" not in created["metadata"]
    assert cluster.get(widgets, "w")["metadata"]["name"] == "w"
    with pytest.raises(NotFound, match=r'widgets\.example\.com "nope" not found'):
        cluster.get(widgets, "nope")


def schema_crd() -> Obj:
    crd = widget_crd()
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["size"],
                "properties": {
                    "size": {"type": "integer", "minimum": 0},
                    "mode": {"type": "string", "enum": ["fast", "slow"], "default": "slow"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "opaque": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    "port": {"x-kubernetes-int-or-string": True},
                    "note": {"type": "string", "nullable": True},
                },
            },
            "status": {
                "type": "object",
                "properties": {"ready": {"type": "boolean"}},
            },
        },
    }
    return crd


def test_custom_resources_are_pruned_defaulted_and_validated(cluster: MemoryCluster) -> None:
    cluster.create(
        res(cluster, "apiextensions.k8s.io/v1", "customresourcedefinitions"), schema_crd()
    )
    widgets = res(cluster, "example.com/v1", "widgets")
    created = cluster.create(
        widgets,
        {
            "metadata": {"name": "w", "namespace": "default"},
            "spec": {
                "size": 1,
                "unknown": True,
                "opaque": {"any": {"thing": 1}},
                "port": "http",
                "note": None,
                "tags": None,
            },
            "extra": 1,
        },
    )
    assert created["spec"] == {
        "size": 1,
        "mode": "slow",
        "opaque": {"any": {"thing": 1}},
        "port": "http",
        "note": None,
    }
    assert "extra" not in created
    created["status"] = {"ready": True, "undeclared": 1}
    assert cluster.update_status(widgets, created)["status"] == {"ready": True}
    bad = {"metadata": {"name": "b", "namespace": "default"}, "spec": {"size": "big"}}
    with pytest.raises(Invalid) as err:
        cluster.create(widgets, bad)
    assert err.value.message == (
        'Widget.example.com "b" is invalid: spec.size: Invalid value: "string": '
        'spec.size in body must be of type integer: "string"'
    )
    for spec, message in [
        ({}, "spec.size: Required value"),
        ({"size": -1}, "should be greater than or equal to 0"),
        ({"size": 1, "mode": "warp"}, 'spec.mode: Unsupported value: "warp"'),
        ({"size": 1, "tags": [1]}, "spec.tags[0] in body must be of type string"),
    ]:
        with pytest.raises(Invalid, match=re.escape(message)):
            cluster.create(widgets, {**bad, "spec": spec})


# --- list ------------------------------------------------------------------------------------


def test_list_selectors(cluster: MemoryCluster) -> None:
    cms = configmaps(cluster)
    cluster.create(cms, cm("a", labels={"app": "x", "tier": "web"}))
    cluster.create(cms, cm("b", labels={"app": "y"}))
    cluster.create(cms, cm("c"))
    assert names(cluster.list(cms, label_selector="app=x").items) == ["a"]
    assert names(cluster.list(cms, label_selector="app in (x,y),tier!=db").items) == ["a", "b"]
    assert names(cluster.list(cms, label_selector="!app").items) == ["c"]
    assert names(cluster.list(cms, field_selector="metadata.name!=b").items) == ["a", "c"]
    assert names(cluster.list(cms, field_selector="metadata.namespace=default").items) == [
        "a",
        "b",
        "c",
    ]
    with pytest.raises(BadRequest):
        cluster.list(cms, label_selector="app in (x")
    with pytest.raises(BadRequest, match=r"field label not supported: data\.k"):
        cluster.list(cms, field_selector="data.k=v")


def test_field_selectors_per_kind(cluster: MemoryCluster) -> None:
    pods = res(cluster, "v1", "pods")
    cluster.create(
        pods, {"metadata": {"name": "p1", "namespace": "default"}, "spec": pod_spec(nodeName="n1")}
    )
    cluster.create(pods, {"metadata": {"name": "p2", "namespace": "default"}, "spec": pod_spec()})
    assert names(cluster.list(pods, field_selector="spec.nodeName=n1").items) == ["p1"]
    assert names(cluster.list(pods, field_selector="spec.nodeName=").items) == ["p2"]
    assert names(cluster.list(pods, field_selector="status.phase!=Running").items) == [
        "p1",
        "p2",
    ]
    secrets = res(cluster, "v1", "secrets")
    cluster.create(secrets, {"metadata": {"name": "s", "namespace": "default"}, "type": "Opaque"})
    assert names(cluster.list(secrets, field_selector="type=Opaque").items) == ["s"]
    events = res(cluster, "v1", "events")
    cluster.create(
        events,
        {
            "metadata": {"name": "e", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "p1"},
            "reason": "Started",
        },
    )
    found = cluster.list(events, field_selector="involvedObject.kind=Pod,reason=Started")
    assert names(found.items) == ["e"]
    ns_selector = "status.phase=Active"
    assert (
        len(cluster.list(res(cluster, "v1", "namespaces"), field_selector=ns_selector).items) == 4
    )
    with pytest.raises(BadRequest):
        cluster.list(secrets, field_selector="spec.nodeName=n1")


def test_list_order_follows_etcd_keys(cluster: MemoryCluster) -> None:
    namespaces = res(cluster, "v1", "namespaces")
    cms = configmaps(cluster)
    for ns in ("a", "a-b"):
        cluster.create(namespaces, {"metadata": {"name": ns}})
    for ns, name in (("a-b", "x"), ("a", "z"), ("a", "y"), ("default", "m")):
        cluster.create(cms, cm(name, namespace=ns))
    listed = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in cluster.list(cms).items]
    assert listed == [("a-b", "x"), ("a", "y"), ("a", "z"), ("default", "m")]
    assert names(cluster.list(cms, namespace="a").items) == ["y", "z"]
    assert all(o["kind"] == "ConfigMap" for o in cluster.list(cms).items)


def test_pagination(cluster: MemoryCluster) -> None:
    cms = configmaps(cluster)
    for i in range(5):
        cluster.create(cms, cm(f"cm{i}"))
    first = cluster.list(cms, limit=2)
    assert names(first.items) == ["cm0", "cm1"]
    assert first.continue_token and first.remaining_item_count == 3
    cluster.create(cms, cm("cm11"))  # after the snapshot: not in the following pages
    cluster.delete(cms, "cm3", namespace="default")
    second = cluster.list(cms, limit=2, continue_token=first.continue_token)
    assert names(second.items) == ["cm2", "cm3"]
    assert second.resource_version == first.resource_version
    third = cluster.list(cms, limit=2, continue_token=second.continue_token)
    assert names(third.items) == ["cm4"]
    assert third.continue_token == "" and third.remaining_item_count is None
    everything = list_all(cluster, cms, page_size=2)
    assert names(everything.items) == ["cm0", "cm1", "cm11", "cm2", "cm4"]
    selected = cluster.list(cms, limit=1, label_selector="!x")
    assert selected.continue_token and selected.remaining_item_count is None
    assert cluster.list(cms, limit=100).continue_token == ""


def continue_token(resource_version: int, last_key: str) -> str:
    """A `continue` token as the API server writes one: URL-safe base64, unpadded, of
    `{"v": "meta.k8s.io/v1", "rv": <list resourceVersion>, "start": <the key after the last>}`."""
    payload = {"v": "meta.k8s.io/v1", "rv": resource_version, "start": last_key + "\x00"}
    raw = json.dumps(payload, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def test_continue_tokens_are_checked(cluster: MemoryCluster) -> None:
    cms = configmaps(cluster)
    for token in ("garbage!", "eyJ2IjoxfQ", continue_token(5, "")[:-3]):
        with pytest.raises(BadRequest, match="continue key is not valid"):
            cluster.list(cms, continue_token=token)
    cluster.create(cms, cm("a"))
    cluster.create(cms, cm("b"))
    # a token whose snapshot is no longer kept continues from the current data
    token = continue_token(1, "default/a")
    assert names(cluster.list(cms, continue_token=token).items) == ["b"]


def test_with_own_stats_shares_the_objects(cluster: MemoryCluster) -> None:
    client = cluster.with_own_stats()
    cms = configmaps(cluster)
    client.create(cms, cm("a"))
    assert names(cluster.list(cms).items) == ["a"]
    assert client.stats.by_verb() == {"create": 1}
    assert cluster.stats.by_verb() == {"list": 1}


def test_requests_are_counted(cluster: MemoryCluster) -> None:
    cms = configmaps(cluster)
    created = cluster.create(cms, cm("a"))
    cluster.get(cms, "a", namespace="default")
    cluster.list(cms)
    cluster.update(cms, created)
    with pytest.raises(NotFound):
        cluster.get(cms, "zz", namespace="default")
    cluster.delete(cms, "a", namespace="default")
    by_verb: dict[str, dict[str, int]] = {}
    for (verb, resource), n in cluster.stats.snapshot().items():
        by_verb.setdefault(verb, {})[resource] = n
    assert by_verb == {
        "create": {"configmaps": 1},
        "delete": {"configmaps": 1},
        "get": {"configmaps": 2},
        "list": {"configmaps": 1},
        "update": {"configmaps": 1},
    }


def test_concurrent_writers(cluster: MemoryCluster) -> None:
    cms = configmaps(cluster)
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for i in range(50):
                created = cluster.create(cms, cm(f"w{worker}-{i}"))
                created["data"] = {"n": str(i)}
                cluster.update(cms, created)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    items = list_all(cluster, cms, page_size=7).items
    assert len(items) == 400
    versions = [int(o["metadata"]["resourceVersion"]) for o in items]
    assert len(set(versions)) == 400


def test_the_clock_stamps_deletions(cluster: MemoryCluster) -> None:
    clock = Clock()
    cluster = MemoryCluster(clock=clock)
    cms = configmaps(cluster)
    cluster.create(cms, cm("a", finalizers=["x.io/f"]))
    clock.now = START + timedelta(hours=1)
    cluster.delete(cms, "a", namespace="default")
    meta = cluster.get(cms, "a", namespace="default")["metadata"]
    assert meta["creationTimestamp"] == "2021-03-04T05:06:07Z"
    assert meta["deletionTimestamp"] == "2021-03-04T06:06:07Z"


# --- manifests -------------------------------------------------------------------------------


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_load_manifests_orders_and_flattens(tmp_path: Path) -> None:
    write(
        tmp_path / "a" / "widgets.yaml",
        """\
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, namespace: team}
spec: {size: 1, when: 2021-01-01T00:00:00Z}
status: {ready: true}
---
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: in-default}
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: owned
    namespace: team
    ownerReferences:
    - {apiVersion: example.com/v1, kind: Widget, name: w1, controller: true}
""",
    )
    write(tmp_path / "b" / "crd.json", json.dumps(widget_crd()))
    write(tmp_path / "c.yml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n")
    write(tmp_path / ".git" / "x.yaml", "not: [valid")
    write(tmp_path / "notes.txt", "ignored")
    cluster = MemoryCluster()
    created = load_manifests(cluster, tmp_path, recursive=True)
    assert [(o["kind"], o["metadata"]["name"]) for o in created] == [
        ("Namespace", "team"),
        ("CustomResourceDefinition", "widgets.example.com"),
        ("Widget", "w1"),
        ("ConfigMap", "in-default"),
        ("ConfigMap", "owned"),
    ]
    widget = created[2]
    assert widget["spec"]["when"] == "2021-01-01T00:00:00Z"
    assert widget["status"] == {"ready": True}  # restored through /status
    owned = created[4]
    assert owned["metadata"]["ownerReferences"][0]["uid"] == widget["metadata"]["uid"]
    assert created[3]["metadata"]["namespace"] == "default"


def test_load_manifests_reports_every_failure(tmp_path: Path) -> None:
    write(
        tmp_path / "bad.yaml",
        """\
apiVersion: v1
kind: ConfigMap
metadata: {name: Bad_Name}
---
apiVersion: example.com/v1
kind: Gadget
metadata: {name: g, namespace: default}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: good}
---
- just a list
""",
    )
    write(tmp_path / "broken.yaml", "a: [b")
    cluster = MemoryCluster()
    with pytest.raises(ManifestError) as err:
        load_manifests(cluster, tmp_path)
    failures = err.value.failures
    assert len(failures) == 4
    assert failures[0].startswith("bad.yaml (document 1): ConfigMap default/Bad_Name: Invalid")
    assert failures[1].startswith("bad.yaml (document 2): Gadget default/g: NotFound")
    assert failures[2].startswith("bad.yaml (document 4): not a mapping")
    assert failures[3].startswith("broken.yaml: cannot be read")
    assert [o["metadata"]["name"] for o in err.value.objects] == ["good"]
    assert exists(cluster, configmaps(cluster), "good", "default")


def populated() -> MemoryCluster:
    cluster = MemoryCluster()
    namespaces = res(cluster, "v1", "namespaces")
    cluster.create(namespaces, {"metadata": {"name": "team", "labels": {"a": "b"}}})
    widgets = with_widgets(cluster)
    parent = cluster.create(
        widgets, {"metadata": {"name": "p", "namespace": "team"}, "spec": {"n": 1}}
    )
    parent["status"] = {"observedGeneration": 1}
    cluster.update_status(widgets, parent)
    cluster.create(
        configmaps(cluster),
        {
            "metadata": {
                "name": "child",
                "namespace": "team",
                "ownerReferences": [owner_ref(parent, controller=True, block=True)],
            },
            "data": {"script": "line 1\nline 2\n", "n": "1"},
        },
    )
    cluster.create(
        res(cluster, "v1", "secrets"),
        {"metadata": {"name": "s", "namespace": "team"}, "data": {"password": "aHVudGVyMg=="}},
    )
    cluster.create(
        res(cluster, "rbac.authorization.k8s.io/v1", "clusterroles"),
        {"metadata": {"name": "viewer"}, "rules": []},
    )
    return cluster


def tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_dump_layout_and_content(tmp_path: Path) -> None:
    paths = dump_objects(populated(), tmp_path)
    files = tree(tmp_path)
    assert sorted(files) == [
        "_cluster/clusterroles.rbac.authorization.k8s.io/viewer.yaml",
        "_cluster/customresourcedefinitions.apiextensions.k8s.io/widgets.example.com.yaml",
        "_cluster/namespaces/team.yaml",
        "team/configmaps/child.yaml",
        "team/secrets/s.yaml",
        "team/widgets.example.com/p.yaml",
    ]
    assert len(paths) == 6
    child = yaml.safe_load(files["team/configmaps/child.yaml"])
    assert set(child["metadata"]) == {"name", "namespace", "ownerReferences"}
    assert "uid" not in child["metadata"]["ownerReferences"][0]
    assert child["data"]["script"] == "line 1\nline 2\n"
    assert "script: |" in files["team/configmaps/child.yaml"]
    secret = yaml.safe_load(files["team/secrets/s.yaml"])
    assert secret["data"] == {"password": "aHVudGVyMg=="}
    crd = yaml.safe_load(
        files["_cluster/customresourcedefinitions.apiextensions.k8s.io/widgets.example.com.yaml"]
    )
    assert "status" not in crd
    everything = populated()
    ns = everything.get(res(everything, "v1", "namespaces"), "default")
    ns["metadata"]["labels"] = {"env": "dev"}
    everything.update(res(everything, "v1", "namespaces"), ns)
    dump_objects(everything, tmp_path / "all", include_builtin_namespaces=True)
    assert (tmp_path / "all" / "_cluster" / "namespaces" / "default.yaml").is_file()
    reloaded = MemoryCluster()
    # Existing namespaces take the labels.
    load_manifests(reloaded, tmp_path / "all", recursive=True)
    default = reloaded.get(res(reloaded, "v1", "namespaces"), "default")
    assert default["metadata"]["labels"] == {"env": "dev", "kubernetes.io/metadata.name": "default"}


def test_dump_load_round_trip_is_stable(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    dump_objects(populated(), first)
    reloaded = MemoryCluster()
    load_manifests(reloaded, first, recursive=True)
    dump_objects(reloaded, second)
    assert tree(first) == tree(second)
    widgets = res(reloaded, "example.com/v1", "widgets")
    parent = reloaded.get(widgets, "p", namespace="team")
    assert parent["status"] == {"observedGeneration": 1}
    child = reloaded.get(configmaps(reloaded), "child", namespace="team")
    assert child["metadata"]["ownerReferences"][0]["uid"] == parent["metadata"]["uid"]
    # the references hold: deleting the owner collects the child
    reloaded.delete(widgets, "p", namespace="team")
    assert not exists(reloaded, configmaps(reloaded), "child", "team")


def test_output_dir_removes_only_what_its_previous_dump_wrote(tmp_path: Path) -> None:
    cluster = populated()
    output = prepare_output_dir(tmp_path / "out", [])
    output.write(cluster)
    write(tmp_path / "out" / "README.md", "kept")
    write(tmp_path / "out" / "team" / "configmaps" / "mine.yaml", "the user's, kept")
    child = tmp_path / "out" / "team" / "configmaps" / "child.yaml"
    os.utime(child, ns=(0, 0))
    cluster.delete(res(cluster, "v1", "secrets"), "s", namespace="team")
    output.write(cluster)
    files = tree(tmp_path / "out")
    assert "README.md" in files
    assert "team/configmaps/mine.yaml" in files
    assert not (tmp_path / "out" / "team" / "secrets").exists()
    assert child.stat().st_mtime_ns == 0  # unchanged content is not rewritten
