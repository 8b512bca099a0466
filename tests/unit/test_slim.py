"""Listed objects as a pass keeps them (reconcile.objects.slim, runner.snapshot): other field
managers' managedFields entries dropped, FieldsV1 nodes shared read-only, and no write
carrying the partial list."""

from __future__ import annotations

import copy
import gc
import json
import pickle
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from reconcile.cluster.memory import MemoryCluster
from reconcile.cluster.types import ObjectList
from reconcile.engine.actions import Action, ActionKind
from reconcile.objects.jsondata import json_copy
from reconcile.objects.meta import Obj
from reconcile.objects.slim import (
    SharedDict,
    SharingTable,
    put_body,
    slimmed,
    without_managed_fields,
)
from reconcile.runner.collector import collector_paused, thaw
from reconcile.runner.execute import Executor
from reconcile.runner.snapshot import Snapshot, managers_to_keep
from tests.support.wrapped import ForwardingCluster

_T = TypeVar("_T")
UID = "3fb0056d-c3d6-47ad-8a3e-c648ec98ad71"


def entry(manager: str, operation: str = "Update", **extra: Any) -> dict[str, Any]:
    return {
        "manager": manager,
        "operation": operation,
        "apiVersion": "v1",
        "time": "2026-11-23T14:16:35Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:data": {".": {}, "f:index": {}},
            "f:metadata": {
                "f:labels": {".": {}, "f:bench": {}},
                "f:ownerReferences": {f'k:{{"uid":"{UID}"}}': {".": {}, "f:uid": {}}},
            },
        },
        **extra,
    }


def configmap(name: str, *entries: dict[str, Any]) -> Obj:
    obj: Obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns", "labels": {"bench": "p"}},
        "data": {"index": "1"},
    }
    if entries:
        obj["metadata"]["managedFields"] = list(entries)
    return obj


def test_only_the_kept_managers_entries_stay() -> None:
    obj = configmap("a", entry("kubectl"), entry("reconcile"), entry("kube-controller-manager"))
    before = copy.deepcopy(obj)
    slim = slimmed(obj, frozenset({"reconcile"}))
    assert [e["manager"] for e in slim["metadata"]["managedFields"]] == ["reconcile"]
    assert slim["metadata"]["managedFields"][0] == entry("reconcile")
    assert obj == before  # a new top level and metadata; equal values only replaced in place
    assert {k: v for k, v in slim.items() if k != "metadata"} == {
        k: v for k, v in before.items() if k != "metadata"
    }


@pytest.mark.parametrize("keep", [frozenset(), frozenset({"reconcile"})])
def test_the_field_goes_when_no_entry_is_left(keep: frozenset[str]) -> None:
    slim = slimmed(configmap("a", entry("kubectl")), keep)
    assert "managedFields" not in slim["metadata"]
    assert slim == configmap("a")


def test_an_object_without_managed_fields_is_kept_as_it_is() -> None:
    obj = configmap("a")
    assert slimmed(obj, frozenset({"reconcile"})) is obj
    assert obj == configmap("a")


def test_equal_fields_nodes_are_one_read_only_object() -> None:
    table = SharingTable()
    first = slimmed(configmap("a", entry("reconcile")), frozenset({"reconcile"}), table)
    second = slimmed(configmap("b", entry("reconcile")), frozenset({"reconcile"}), table)
    fields = [o["metadata"]["managedFields"][0]["fieldsV1"] for o in (first, second)]
    assert fields[0] is fields[1]
    assert fields[0] == entry("reconcile")["fieldsV1"]
    assert isinstance(fields[0], SharedDict)
    node = fields[0]["f:data"]
    with pytest.raises(TypeError):
        node["f:other"] = {}
    with pytest.raises(TypeError):
        node.pop("f:index")
    with pytest.raises(TypeError):
        node.update({"x": {}})


def owned(name: str, owner_uid: str) -> Obj:
    obj = configmap(name, entry("reconcile"))
    obj["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": owner_uid, "controller": True}
    ]
    return obj


def test_one_owners_children_share_their_references_labels_and_entries() -> None:
    table = SharingTable()
    keep = frozenset({"reconcile"})
    first, second, other = (
        slimmed(owned(name, uid), keep, table)
        for name, uid in (("a", UID), ("b", UID), ("c", "another-uid"))
    )
    for key in ("ownerReferences", "labels", "managedFields"):
        assert first["metadata"][key] is second["metadata"][key], key
        assert first["metadata"][key] == owned("a", UID)["metadata"][key], key
    assert other["metadata"]["ownerReferences"] is not first["metadata"]["ownerReferences"]
    assert other["metadata"]["ownerReferences"][0]["uid"] == "another-uid"
    assert json.loads(json.dumps(first)) == owned("a", UID)


def test_shared_lists_and_maps_are_read_only_and_copy_into_plain_data() -> None:
    table = SharingTable()
    slim = slimmed(owned("a", UID), frozenset({"reconcile"}), table)
    refs = slim["metadata"]["ownerReferences"]
    for change in (
        lambda: refs.append({}),
        lambda: refs.__setitem__(0, {}),
        refs.pop,
        refs.sort,
        lambda: refs[0].__setitem__("controller", False),
        lambda: slim["metadata"]["labels"].update({"x": "y"}),
        slim["metadata"]["managedFields"].clear,
    ):
        with pytest.raises(TypeError, match="shared"):
            change()
    for copied in (copy.deepcopy(slim), json_copy(slim), pickle.loads(pickle.dumps(slim))):
        meta = copied["metadata"]
        assert type(meta["ownerReferences"]) is list and type(meta["labels"]) is dict
        assert type(meta["ownerReferences"][0]) is dict
        meta["ownerReferences"].append({"uid": "x"})
        meta["labels"]["x"] = "y"
    assert slim == owned("a", UID)


def test_values_that_are_not_what_they_should_be_are_kept_as_they_are() -> None:
    obj = owned("a", UID)
    odd_refs = obj["metadata"]["ownerReferences"] = [{"uid": ["not", "a", "string"]}]
    odd_labels = obj["metadata"]["labels"] = "not a map"
    odd_entry = {"manager": "reconcile", "time": {"nested": ["list"]}}
    obj["metadata"]["managedFields"] = [odd_entry]
    slim = slimmed(obj, frozenset({"reconcile"}), SharingTable())
    assert slim["metadata"]["ownerReferences"] is odd_refs
    assert slim["metadata"]["labels"] is odd_labels
    assert slim["metadata"]["managedFields"] == [odd_entry]


def test_a_shared_node_copies_into_plain_data() -> None:
    table = SharingTable()
    slim = slimmed(configmap("a", entry("reconcile")), frozenset({"reconcile"}), table)
    for copied in (copy.deepcopy(slim), json_copy(slim)):
        tree = copied["metadata"]["managedFields"][0]["fieldsV1"]
        assert type(tree) is dict and type(tree["f:data"]) is dict
        tree["f:data"]["f:new"] = {}  # the copy is the caller's to change
    assert json.loads(json.dumps(slim)) == slim
    assert "f:new" not in slim["metadata"]["managedFields"][0]["fieldsV1"]["f:data"]


def test_a_tree_that_is_not_fields_v1_is_left_alone() -> None:
    odd = entry("reconcile", fieldsV1={"f:x": [1, 2]})
    slim = slimmed(configmap("a", odd), frozenset({"reconcile"}))
    assert slim["metadata"]["managedFields"][0]["fieldsV1"] == {"f:x": [1, 2]}


def test_a_write_carries_managed_fields_only_when_it_changes_them() -> None:
    listed = configmap("a", entry("reconcile"))
    changed = copy.deepcopy(listed)
    changed["data"] = {"index": "2"}
    sent = put_body(listed, changed)
    assert "managedFields" not in sent["metadata"]
    assert "managedFields" in changed["metadata"]
    assert {k: v for k, v in sent.items() if k != "metadata"} == {
        k: v for k, v in changed.items() if k != "metadata"
    }
    moved = copy.deepcopy(listed)
    moved["metadata"]["managedFields"] = [entry("reconcile", "Apply"), entry("kubectl")]
    assert put_body(listed, moved) is moved  # moving to server-side apply rewrites the list
    assert without_managed_fields(configmap("b")) == configmap("b")


def test_server_side_apply_keeps_every_managers_entries() -> None:
    assert managers_to_keep(server_side=False) == frozenset()
    assert managers_to_keep(server_side=True) is None
    obj = configmap("a", entry("kubectl"), entry("reconcile"))
    slim = slimmed(obj, None)
    assert [e["manager"] for e in slim["metadata"]["managedFields"]] == ["kubectl", "reconcile"]
    assert slim == configmap("a", entry("kubectl"), entry("reconcile"))


class ListedWithManagedFields(ForwardingCluster):
    """Lists objects as a real API server does (with other managers' entries too) and records
    what each write sends."""

    def __init__(self, inner: MemoryCluster) -> None:
        super().__init__(inner)
        self.sent: list[Obj | None] = []

    def read(self, call: Callable[[], _T]) -> _T:
        result = call()
        if isinstance(result, ObjectList):
            for item in result.items:
                item["metadata"]["managedFields"] = [entry("kubectl"), entry("reconcile")]
        return result

    def write(self, what: str, body: Obj | None, call: Callable[[], _T]) -> _T:
        self.sent.append(copy.deepcopy(body))
        return call()


def test_the_snapshot_slims_what_it_lists_and_no_write_sends_the_partial_list() -> None:
    inner = MemoryCluster()
    configmaps = inner.discover("v1", "configmaps")
    namespaces = inner.discover("v1", "namespaces")
    inner.create(namespaces, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    inner.create(configmaps, configmap("a"))
    cluster = ListedWithManagedFields(inner)

    (listed,) = Snapshot(cluster, keep_managers=frozenset({"reconcile"})).objects(configmaps)
    assert [e["manager"] for e in listed["metadata"]["managedFields"]] == ["reconcile"]
    (bare,) = Snapshot(cluster).objects(configmaps)  # client-side apply reads none of them
    assert "managedFields" not in bare["metadata"]

    after = json_copy(listed)
    after["data"] = {"index": "2"}
    results = Executor(cluster, dry_run=False).execute(
        [Action(ActionKind.UPDATE, configmaps, listed, after, "a change")]
    )
    assert [r.applied for r in results] == [True]
    (sent,) = cluster.sent
    assert sent is not None and "managedFields" not in sent["metadata"]
    assert sent["data"] == {"index": "2"}


def test_listing_pauses_the_collector_and_a_pass_end_thaws() -> None:
    enabled = gc.isenabled()
    try:
        gc.enable()
        with collector_paused():
            assert not gc.isenabled()
            with collector_paused():
                assert not gc.isenabled()
            assert not gc.isenabled()
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0
        thaw()
        assert gc.get_freeze_count() == 0
    finally:
        thaw()
        if not enabled:
            gc.disable()
