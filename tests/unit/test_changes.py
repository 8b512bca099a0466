"""The leaf-by-leaf changes of an update, as the loop guard compares and reports them."""

from __future__ import annotations

from reconcile.engine.changes import FieldChange, field_changes, fingerprint


def test_changed_leaves_are_listed_by_path() -> None:
    wanted = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "resourceVersion": "1", "labels": {"a": "1"}},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "0.5"}}}]},
        "status": {"phase": "Pending"},
    }
    kept = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "resourceVersion": "9"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}]},
        "status": {"phase": "Running"},
    }
    changes = field_changes(wanted, kept)
    assert changes == [
        FieldChange("metadata.labels", {"a": "1"}, None),
        FieldChange("spec.containers[0].resources.requests.cpu", "0.5", "500m"),
    ]
    assert changes[1].describe() == (
        'spec.containers[0].resources.requests.cpu: the cluster keeps `"500m"` where the hook '
        'returns `"0.5"`'
    )
    assert field_changes(wanted, kept, status=True) == [
        FieldChange("status.phase", "Pending", "Running")
    ]


def test_lists_of_other_lengths_are_one_change_and_fingerprints_follow_values() -> None:
    (change,) = field_changes({"spec": {"args": ["a", "b"]}}, {"spec": {"args": ["a"]}})
    assert change == FieldChange("spec.args", ["a", "b"], ["a"])
    assert change.describe().startswith('spec.args: the cluster keeps `["a"]`')
    assert fingerprint([change]) != fingerprint([FieldChange("spec.args", ["a", "c"], ["a"])])
    assert field_changes({"spec": {}}, {"spec": {"x": 1}})[0].describe() == (
        "spec.x: the cluster keeps `1` where the hook returns nothing"
    )
