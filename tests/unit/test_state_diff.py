"""The comparison behind `reconcile diff`, on plain objects: what counts as a change, what is
noise, how objects are grouped, and the reports' limits."""

from __future__ import annotations

import json
from typing import Any

from reconcile.report.diff import ChangeOp
from reconcile.report.state_diff import (
    MANIFESTS_GROUP,
    Comparison,
    Key,
    ObjectChange,
    Side,
    compare_states,
    field_changes,
    key,
)
from reconcile.report.state_diff_markdown import COMMENT_LIMIT, render_markdown
from reconcile.report.state_diff_render import comparison_dict, exit_status, render_text

Obj = dict[str, Any]


def configmap(name: str, data: dict[str, str], **meta: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "team", **meta},
        "data": data,
    }


def owned_by(obj: Obj, kind: str, name: str) -> Obj:
    obj["metadata"]["ownerReferences"] = [
        {"apiVersion": "example.com/v1", "kind": kind, "name": name, "controller": True}
    ]
    return obj


def parent(name: str, spec: dict[str, Any], status: dict[str, Any] | None = None) -> Obj:
    out: Obj = {
        "apiVersion": "example.com/v1",
        "kind": "Greeting",
        "metadata": {"name": name, "namespace": "team"},
        "spec": spec,
    }
    if status is not None:
        out["status"] = status
    return out


def created_by_greeter(objects: list[Obj]) -> dict[Key, str]:
    """What the run's actions would say: the Greetings' children were created by `greeter`."""
    return {
        key(o): "greeter"
        for o in objects
        if any(r.get("kind") == "Greeting" for r in o["metadata"].get("ownerReferences", []))
    }


def compare(base: list[Obj], head: list[Obj], **kwargs: Any) -> Any:
    return compare_states(
        base,
        head,
        base_creators=created_by_greeter(base),
        head_creators=created_by_greeter(head),
        **kwargs,
    )


def test_a_one_word_change_is_that_one_field_on_each_object() -> None:
    base = [
        parent("hello", {"message": "Hello"}, {"observedGeneration": 1}),
        owned_by(configmap("hello-greeting", {"message": "Hello"}), "Greeting", "hello"),
    ]
    head = [
        parent("hello", {"message": "Hi"}, {"observedGeneration": 2}),
        owned_by(configmap("hello-greeting", {"message": "Hi"}), "Greeting", "hello"),
    ]
    diff = compare(base, head)
    assert [(o.group, o.title, o.change) for o in diff.objects] == [
        ("greeter", "ConfigMap team/hello-greeting", ObjectChange.CHANGED),
        (MANIFESTS_GROUP, "Greeting team/hello", ObjectChange.CHANGED),
    ]
    for entry in diff.objects:
        assert [(c.dotted, c.op, c.after) for c in entry.changes] == [
            (c.dotted, ChangeOp.CHANGE, "Hi") for c in entry.changes
        ]
        assert len(entry.changes) == 1
    assert {c.dotted for o in diff.objects for c in o.changes} == {"data.message", "spec.message"}


def record(obj: Obj, **changes: Any) -> Obj:
    """`obj` with a last-applied annotation that truly records it (less `changes`' keys)."""
    recorded = {k: v for k, v in obj.items() if k not in changes}
    obj["metadata"]["annotations"] = {
        "metacontroller.k8s.io/last-applied-configuration": json.dumps(recorded)
    }
    return obj


def test_noise_is_left_out() -> None:
    """Last-applied annotations that record their object, status (unless asked), revisions and
    Events never count."""
    base = [
        parent("hello", {"message": "Hello"}, {"ready": 1}),
        record(configmap("x", {"a": "1"})),
        {
            "apiVersion": "metacontroller.k8s.io/v1alpha1",
            "kind": "ControllerRevision",
            "metadata": {"name": "r-1", "namespace": "team"},
            "children": [],
        },
    ]
    head = [
        parent("hello", {"message": "Hello"}, {"ready": 2}),
        record(configmap("x", {"a": "1"}), data=None),  # a record of less: still a record
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "e", "namespace": "team"},
            "reason": "Synced",
        },
    ]
    assert compare(base, head).objects == []
    with_status = compare(base, head, include_status=True)
    assert [(o.title, [c.dotted for c in o.changes]) for o in with_status.objects] == [
        ("Greeting team/hello", ["status.ready"])
    ]


def test_created_objects_show_what_they_hold_and_deleted_what_they_held() -> None:
    """A created object is shown as it is, with what the server added (its true last-applied
    record left out as noise), never as its annotation says."""
    asked = configmap("new-greeting", {"message": "Hey"})
    created = configmap(
        "new-greeting",
        {"message": "Hey"},
        annotations={"metacontroller.k8s.io/last-applied-configuration": json.dumps(asked)},
        labels={"defaulted": "by-server"},
    )
    owned_by(created, "Greeting", "new")
    gone = owned_by(configmap("old-greeting", {"message": "Bye"}), "Greeting", "hello")
    diff = compare([parent("hello", {}), gone], [parent("hello", {}), parent("new", {}), created])
    by_title = {o.title: o for o in diff.objects}
    assert by_title["ConfigMap team/new-greeting"].change is ObjectChange.CREATED
    shown = by_title["ConfigMap team/new-greeting"].content
    assert shown is not None
    assert shown["metadata"]["labels"] == {"defaulted": "by-server"}
    assert "annotations" not in shown["metadata"]
    assert shown["data"] == {"message": "Hey"}
    assert by_title["ConfigMap team/new-greeting"].group == "greeter"
    assert by_title["ConfigMap team/old-greeting"].change is ObjectChange.DELETED
    assert by_title["ConfigMap team/old-greeting"].content == gone
    assert by_title["Greeting team/new"].group == MANIFESTS_GROUP


def test_named_list_items_are_matched_by_name() -> None:
    before = {"containers": [{"name": "web", "image": "a:1"}, {"name": "log", "image": "b:1"}]}
    after = {
        "containers": [
            {"name": "init", "image": "c:1"},
            {"name": "web", "image": "a:2"},
            {"name": "log", "image": "b:1"},
        ]
    }
    changes = field_changes(before, after)
    assert [(c.dotted, c.op) for c in changes] == [
        ("containers[name=web].image", ChangeOp.CHANGE),
        ("containers[name=init]", ChangeOp.ADD),
    ]
    reordered = {"containers": list(reversed(before["containers"]))}
    assert [c.dotted for c in field_changes(before, reordered)] == ["containers (order)"]
    # unnamed lists stay positional
    assert [c.dotted for c in field_changes({"args": ["a", "b"]}, {"args": ["a", "c"]})] == [
        "args[1]"
    ]


def test_secret_values_are_redacted_but_which_keys_change_shows() -> None:
    def secret(data: dict[str, str]) -> Obj:
        return {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "s", "namespace": "team"},
            "data": data,
        }

    diff = compare([secret({"a": "c2VjcmV0", "b": "eA=="})], [secret({"a": "bmV3", "b": "eA=="})])
    (entry,) = diff.objects
    (change,) = entry.changes
    assert change.dotted == "data.a"
    assert "c2VjcmV0" not in repr(change) and "bmV3" not in repr(change)
    created = compare([], [secret({"token": "dG9rZW4="})]).objects[0]
    assert "dG9rZW4=" not in json.dumps(created.content)


def test_owner_chains_that_loop_end() -> None:
    a = owned_by(configmap("a", {}), "ConfigMap", "b")
    b = owned_by(configmap("b", {}), "ConfigMap", "a")
    a["metadata"]["ownerReferences"][0]["apiVersion"] = "v1"
    b["metadata"]["ownerReferences"][0]["apiVersion"] = "v1"
    diff = compare([], [a, b])
    assert {o.group for o in diff.objects} == {MANIFESTS_GROUP}


def comparison(n: int, *, errors: tuple[str, ...] = ()) -> Comparison:
    head = [
        owned_by(configmap(f"cm-{i:04d}", {"payload": "x" * 400}), "Greeting", "hello")
        for i in range(n)
    ]
    diff = compare([parent("hello", {})], [parent("hello", {}), *head])
    return Comparison(Side("main", commit="a" * 40), Side("change"), diff, errors=errors)


def test_markdown_stays_within_a_comment_and_says_what_was_cut() -> None:
    big = comparison(400)
    text = render_markdown(big)
    assert len(text) <= COMMENT_LIMIT
    # every object is named, in order; those that fit are shown whole
    assert text.count("<details><summary>+ ConfigMap") == 400
    named = text.count("<i>(not shown: 12 lines)</i>")
    assert 0 < named < 400
    assert f"**{named} of 400 objects are not shown in full** here ({named} named only)" in text
    assert text.count("<details") == text.count("</details>")
    small = render_markdown(comparison(3))
    assert "not shown" not in small and small.count("<details><summary>+ ConfigMap") == 3


def test_exit_status_and_formats() -> None:
    assert exit_status(comparison(0)) == 0
    assert exit_status(comparison(2)) == 2
    failed = comparison(2, errors=("hook sync failed",))
    assert exit_status(failed) == 1
    assert "hook sync failed" in render_text(failed)
    report = comparison_dict(comparison(1))
    assert report["counts"] == {"created": 1, "deleted": 0, "changed": 0, "compared": 3}
    assert report["objects"][0]["controller"] == "greeter"
    assert report["base"]["commit"] == "a" * 40
    assert report["identical"] is False
