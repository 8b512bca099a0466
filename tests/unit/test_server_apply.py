"""Server-side apply decided on plain dicts: managedFields read and written, the plan that
sends nothing when converged, the move from client-side apply, and the in-process server's
field ownership (conflicts, forced takeovers, shared fields)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reconcile.cluster.errors import FieldConflict, is_transient
from reconcile.cluster.memory import MemoryCluster
from reconcile.engine import apply, server_apply
from reconcile.objects import managed_fields as mf

POD_FIELDS = {
    "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
    "f:spec": {
        "f:containers": {
            'k:{"name":"web"}': {
                ".": {},
                "f:image": {},
                "f:ports": {
                    'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}
                },
            }
        }
    },
}


def test_fields_read_and_written_losslessly() -> None:
    paths = mf.parse_fields(POD_FIELDS)
    assert ("f:metadata", "f:labels", "f:app") in paths
    assert ("f:metadata", "f:labels") in paths  # "." : the map itself is owned too
    assert ("f:spec", "f:containers", 'k:{"name":"web"}') in paths
    assert mf.fields_tree(paths) == POD_FIELDS
    assert mf.parse_fields("not a tree") == frozenset()


def test_a_path_reads_an_item_by_its_key_even_without_a_defaulted_key_field() -> None:
    pod = {
        "spec": {"containers": [{"name": "web", "image": "a", "ports": [{"containerPort": 80}]}]}
    }
    paths = mf.parse_fields(POD_FIELDS)
    assert mf.present_in(paths, pod) == paths - {
        ("f:metadata", "f:labels"),
        ("f:metadata", "f:labels", "f:app"),
    }
    port = (
        "f:spec",
        "f:containers",
        'k:{"name":"web"}',
        "f:ports",
        'k:{"containerPort":80,"protocol":"TCP"}',
    )
    assert mf.remove(pod, port) and pod["spec"]["containers"][0]["ports"] == []
    assert not mf.remove(pod, port)
    assert (
        mf.describe(port) == '.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"]'
    )


def configmap(data: dict[str, str], **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "n", **extra},
        "data": data,
    }


def applied(
    obj: dict[str, Any], *paths: mf.FieldPath, manager: str = "reconcile", operation: str = "Apply"
) -> dict[str, Any]:
    obj = json.loads(json.dumps(obj))
    obj["metadata"].setdefault("managedFields", []).append(
        {
            "manager": manager,
            "operation": operation,
            "apiVersion": "v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": mf.fields_tree(paths),
        }
    )
    return obj


def test_a_converged_object_needs_no_apply() -> None:
    observed = applied(configmap({"a": "1"}), ("f:data", "f:a"))
    plan = server_apply.plan(observed, configmap({"a": "1"}))
    assert plan.predicted is None and plan.migrated is None


def test_a_changed_value_or_a_field_left_out_needs_an_apply() -> None:
    observed = applied(
        configmap({"a": "1", "b": "2", "theirs": "x"}), ("f:data", "f:a"), ("f:data", "f:b")
    )
    changed = server_apply.plan(observed, configmap({"a": "2", "b": "2"}))
    assert changed.predicted is not None and changed.predicted["data"]["a"] == "2"
    dropped = server_apply.plan(observed, configmap({"a": "1"}))
    assert dropped.predicted is not None
    assert dropped.predicted["data"] == {"a": "1", "theirs": "x"}  # only what we applied goes
    assert dropped.config == configmap({"a": "1"})


def test_the_configuration_is_what_the_server_schema_accepts() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "annotations": {apply.LAST_APPLIED_ANNOTATION: "{}"},
            "resourceVersion": "9",
        },
        "spec": {
            "containers": [
                {
                    "name": "web",
                    "image": "nginx",
                    "ports": [{"containerPort": 80}],
                    "resources": {"limits": {"cpu": 0.5, "memory": 1024}},
                    "workingDir": None,
                }
            ]
        },
        "status": {"phase": "Running"},
    }
    config = server_apply.apply_config(pod)
    container = config["spec"]["containers"][0]
    assert container["resources"]["limits"] == {"cpu": "0.5", "memory": "1024"}
    assert container["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert "workingDir" not in container and "status" not in config
    assert config["metadata"] == {"name": "p", "annotations": {}}


def test_an_object_applied_client_side_moves_its_fields_to_the_apply_entry() -> None:
    desired = configmap({"a": "1", "b": "2"})
    created = apply.prepare_desired(desired)
    observed = applied(
        created,
        ("f:data", "f:a"),
        ("f:data", "f:b"),
        ("f:metadata", "f:annotations", f"f:{apply.LAST_APPLIED_ANNOTATION}"),
        operation="Update",
    )
    observed = applied(observed, ("f:data", "f:theirs"), manager="editor", operation="Update")
    observed["data"]["theirs"] = "x"
    plan = server_apply.plan(observed, configmap({"a": "1"}))
    assert plan.migrated is not None
    assert apply.LAST_APPLIED_ANNOTATION not in plan.migrated["metadata"].get("annotations", {})
    owners = {
        (e["manager"], e["operation"]): mf.parse_fields(e["fieldsV1"])
        for e in mf.entries(plan.migrated)
    }
    assert owners[("reconcile", "Apply")] == {("f:data", "f:a"), ("f:data", "f:b")}
    assert ("reconcile", "Update") not in owners  # nothing else was ours
    assert owners[("editor", "Update")] == {("f:data", "f:theirs")}
    assert plan.predicted is not None and plan.predicted["data"] == {"a": "1", "theirs": "x"}


# --- the in-process server ---------------------------------------------------------------------


@pytest.fixture
def cluster() -> MemoryCluster:
    store = MemoryCluster()
    namespaces = store.discover("v1", "namespaces")
    store.create(namespaces, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}})
    return store


def test_memory_server_side_apply_conflicts_forces_and_shares(cluster: MemoryCluster) -> None:
    cms = cluster.discover("v1", "configmaps")
    cluster.apply(cms, configmap({"a": "1", "b": "2"}), field_manager="reconcile")
    editor = cluster.with_own_stats(field_manager="editor")
    stored = cluster.get(cms, "c", namespace="n")
    stored["data"] = {"a": "changed", "b": "2", "theirs": "x"}
    editor.update(cms, stored)

    with pytest.raises(FieldConflict) as raised:
        cluster.apply(cms, configmap({"a": "1", "b": "2"}), field_manager="reconcile")
    assert str(raised.value).endswith('conflict with "editor" using v1: .data.a')
    assert not is_transient(raised.value)

    taken = cluster.apply(cms, configmap({"a": "1"}), field_manager="reconcile", force=True)
    assert taken["data"] == {"a": "1", "theirs": "x"}  # b: ours alone and left out, removed
    owners = {e["manager"]: mf.parse_fields(e["fieldsV1"]) for e in mf.entries(taken)}
    assert owners["reconcile"] == {("f:data", "f:a")}
    assert owners["editor"] == {("f:data", "f:theirs")}


def test_memory_a_field_two_managers_applied_stays_when_one_lets_go(cluster: MemoryCluster) -> None:
    cms = cluster.discover("v1", "configmaps")
    cluster.apply(cms, configmap({"a": "1"}), field_manager="one")
    cluster.apply(cms, configmap({"a": "1"}), field_manager="two")  # same value: shared
    after = cluster.apply(cms, configmap({}), field_manager="one")
    assert after["data"] == {"a": "1"}
    again = cluster.apply(cms, configmap({"a": "1"}), field_manager="one")
    assert again["metadata"]["resourceVersion"] != after["metadata"]["resourceVersion"]
    same = cluster.apply(cms, configmap({"a": "1"}), field_manager="one")
    assert same["metadata"]["resourceVersion"] == again["metadata"]["resourceVersion"]


def test_memory_updates_own_what_they_change(cluster: MemoryCluster) -> None:
    cms = cluster.discover("v1", "configmaps")
    created = cluster.create(cms, configmap({"a": "1"}, labels={"x": "y"}))
    [entry] = mf.entries(created)
    assert (entry["manager"], entry["operation"]) == ("reconcile", "Update")
    assert mf.parse_fields(entry["fieldsV1"]) >= {
        ("f:data", "f:a"),
        ("f:metadata", "f:labels", "f:x"),
    }
    created["data"]["a"] = "2"
    updated = cluster.with_own_stats(field_manager="editor").update(cms, created)
    owners = {e["manager"]: mf.parse_fields(e["fieldsV1"]) for e in mf.entries(updated)}
    assert owners["editor"] == {("f:data", "f:a")}
    assert ("f:data", "f:a") not in owners["reconcile"]
