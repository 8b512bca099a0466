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


def parent(labels: dict[str, str], annotations: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "reconcile",
            "namespace": "default",
            "labels": labels,
            "annotations": annotations,
        },
    }


def test_only_our_own_parent_or_none_is_accepted() -> None:
    ours = applyset.parent_object(REF, {"ConfigMap"}, set())
    assert applyset.parent_problem(None, REF) is None
    assert applyset.parent_problem(ours, REF) is None
    older = parent({applyset.SET_ID: REF.id}, {applyset.TOOLING: "reconcile/v0"})
    assert applyset.parent_problem(older, REF) is None
    for labels, notes, says in (
        ({}, {}, "is not an ApplySet parent"),
        ({applyset.SET_ID: REF.id}, {applyset.TOOLING: "kubectl/v1.30.0"}, "'kubectl/v1.30.0'"),
        ({applyset.SET_ID: REF.id}, {}, "is missing"),
        ({applyset.SET_ID: REF.id}, {applyset.TOOLING: "reconciler/v1"}, "another tool"),
        ({applyset.SET_ID: "applyset-x-v1"}, {applyset.TOOLING: "reconcile/v1"}, "not this set"),
    ):
        problem = applyset.parent_problem(parent(labels, notes), REF)
        assert problem is not None and says in problem, (labels, notes, problem)


def test_a_shrink_is_more_than_half_of_the_members_and_more_than_one_object() -> None:
    assert applyset.shrink_problem(members=4, deletes=2) is None
    assert applyset.shrink_problem(members=1, deletes=1) is None
    assert applyset.shrink_problem(members=0, deletes=0) is None
    problem = applyset.shrink_problem(members=4, deletes=3)
    assert problem is not None and "3 of the set's 4" in problem
    assert applyset.shrink_problem(members=3, deletes=2) is not None


def test_a_cascade_counts_what_the_prune_does_not_take_and_the_cluster_did_not_make() -> None:
    def obj(kind: str, name: str, **extra: Any) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": kind,
            "metadata": {"name": name, "namespace": "team"},
            **extra,
        }

    owned = obj("Pod", "web-1")
    owned["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": "web", "uid": "u"}]
    contents = [
        obj("ConfigMap", "pruned"),
        obj("ConfigMap", "kube-root-ca.crt"),
        obj("ServiceAccount", "default"),
        obj("Secret", "default-token-x", type="kubernetes.io/service-account-token"),
        obj("Event", "e1"),
        owned,
        obj("Secret", "theirs"),
        obj("ServiceAccount", "builder"),
    ]
    taken = applyset.cascade(contents, {("ConfigMap", "team", "pruned")})
    assert [applyset.group_kind(o) + " " + o["metadata"]["name"] for o in taken] == [
        "Secret theirs",
        "ServiceAccount builder",
    ]
    assert applyset.describe_taken(taken, shown=1) == (
        "2 objects outside the set (Secret team/theirs and 1 more)"
    )
