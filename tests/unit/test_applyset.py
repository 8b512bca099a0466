"""The ApplySet inventory, pure: ids, member labels, and what prune may delete."""

from __future__ import annotations

from typing import Any

from reconcile.engine import applyset
from reconcile.engine.actions import ActionKind
from reconcile.engine.applyset import ApplySetRef
from reconcile.objects.resource import ResourceInfo

REF = ApplySetRef("default", "reconcile")
CONFIGMAPS = ResourceInfo("", "v1", "configmaps", "ConfigMap", namespaced=True)
NAMESPACES = ResourceInfo("", "v1", "namespaces", "Namespace", namespaced=False)


def cm(name: str, namespace: str = "team", member: bool = True) -> dict[str, Any]:
    labels = {applyset.PART_OF: REF.id} if member else {}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}", "labels": labels},
    }


def test_the_id_follows_the_kep() -> None:
    # base64url(sha256("reconcile.default.ConfigMap.")), no padding
    assert REF.id.startswith("applyset-") and REF.id.endswith("-v1")
    assert len(REF.id) == len("applyset-") + 43 + len("-v1")
    assert ApplySetRef("other", "reconcile").id != REF.id


def test_members_are_labelled_and_applied_three_way() -> None:
    desired = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "a"},
        "data": {"k": "v"},
    }
    member = applyset.as_member(desired, REF)
    assert member["metadata"]["labels"] == {applyset.PART_OF: REF.id}
    assert "labels" not in desired["metadata"]  # the manifest itself is not changed
    [create] = applyset.plan_apply(CONFIGMAPS, member, None)
    assert create is not None and create.kind is ActionKind.CREATE and create.after is not None
    stored = {
        **create.after,
        "metadata": {**create.after["metadata"], "uid": "u", "resourceVersion": "1"},
    }
    assert applyset.plan_apply(CONFIGMAPS, member, stored) == []


def test_prune_deletes_only_members_that_left_the_manifests() -> None:
    wanted = {("ConfigMap", "team", "kept")}
    found: list[tuple[ResourceInfo, dict[str, Any]]] = [
        (CONFIGMAPS, cm("kept")),
        (CONFIGMAPS, cm("gone")),
        (CONFIGMAPS, cm("someone-elses", member=False)),
        (
            NAMESPACES,
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": "old", "labels": {applyset.PART_OF: REF.id}},
            },
        ),
    ]
    deletes = applyset.plan_prune(found, wanted, REF)
    assert [(a.kind, a.name) for a in deletes] == [
        (ActionKind.DELETE, "gone"),
        (ActionKind.DELETE, "old"),  # namespaces last
    ]
    assert deletes[0].uid == "uid-gone"  # deleted with the uid as precondition


def test_the_parent_records_kinds_and_namespaces() -> None:
    parent = applyset.parent_object(REF, {"Deployment.apps", "ConfigMap"}, {"default", "team"})
    annotations = parent["metadata"]["annotations"]
    assert annotations[applyset.GROUP_KINDS] == "ConfigMap,Deployment.apps"
    assert annotations[applyset.NAMESPACES] == "team"
    assert parent["metadata"]["labels"] == {applyset.SET_ID: REF.id}
    assert applyset.recorded_group_kinds(parent) == {"ConfigMap", "Deployment.apps"}
