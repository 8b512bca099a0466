"""CompositeController end to end, on the real API server and on the memory backend, with
real HTTP hook servers on loopback."""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from reconcile.cluster import NotFound, list_all
from reconcile.cluster.types import Obj, ResourceInfo
from reconcile.objects.meta import metadata
from tests.support.backends import Backend
from tests.support.controllers import composite, run, webhook, write_controllers
from tests.support.hookserver import serve
from tests.support.poll import eventually

SELECTOR = {"matchLabels": {"app": "demo"}}
CM = ("v1", "configmaps", "InPlace")


def parent_obj(res: ResourceInfo, name: str, namespace: str, **spec: Any) -> Obj:
    return {
        "apiVersion": res.api_version,
        "kind": res.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": SELECTOR, **spec},
    }


def cm(name: str, data: dict[str, str] | None = None, **labels: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"app": "demo", **labels}},
        "data": data or {"from": "hook"},
    }


def get(backend: Backend, res: ResourceInfo, name: str, namespace: str | None) -> Obj | None:
    try:
        return backend.admin.get(res, name, namespace=namespace)
    except NotFound:
        return None


def events_for(backend: Backend, namespace: str, name: str) -> list[Obj]:
    events = backend.admin.discover("v1", "events")
    return [
        e
        for e in list_all(backend.admin, events, namespace=namespace).items
        if e.get("involvedObject", {}).get("name") == name
    ]


def test_sync_creates_children_and_writes_status(
    backend: Backend, namespace: str, widgets: ResourceInfo, cms: ResourceInfo, tmp_path: Path
) -> None:
    backend.admin.create(widgets, parent_obj(widgets, "w1", namespace, size=2))

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        size = request["parent"]["spec"]["size"]
        observed = request["children"]["ConfigMap.v1"]
        return {
            "status": {"observed": len(observed)},
            "children": [cm(f"w1-{i}") for i in range(size)],
        }

    with serve(sync) as hook:
        controller = composite("widgets", widgets, [CM], {"sync": webhook(hook.url)})
        result = run(backend, write_controllers(tmp_path, controller))
        assert result.errors == [] and result.converged
        first = hook.requests[0]
        assert first["children"] == {"ConfigMap.v1": {}}  # always present, even when empty
        assert first["finalizing"] is False and first["related"] == {}
        assert first["controller"]["metadata"]["name"] == "widgets"
    parent = backend.admin.get(widgets, "w1", namespace=namespace)
    for i in range(2):
        child = backend.admin.get(cms, f"w1-{i}", namespace=namespace)
        ref = metadata(child)["ownerReferences"][0]
        assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == (
            "Widget",
            "w1",
            metadata(parent)["uid"],
            True,
        )
        assert ref["blockOwnerDeletion"] is True
        assert "metacontroller.k8s.io/last-applied-configuration" in metadata(child)["annotations"]
    assert parent["status"] == {"observed": 2, "observedGeneration": 1}


def test_a_converged_pass_lists_each_type_once_however_many_workers_ask(
    backend: Backend, namespace: str, widgets: ResourceInfo, tmp_path: Path
) -> None:
    """Eight workers start at once and each needs the children's LIST and the parent kind's
    schema (a LIST of its CRD): each is sent once, the others wait for it."""
    for i in range(16):
        backend.admin.create(widgets, parent_obj(widgets, f"w{i}", namespace))

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        name = request["parent"]["metadata"]["name"]
        return {"status": {"ok": True}, "children": [cm(f"{name}-a"), cm(f"{name}-b")]}

    with serve(sync) as hook:
        controller = composite("widgets", widgets, [CM], {"sync": webhook(hook.url)})
        path = write_controllers(tmp_path, controller)
        assert run(backend, path, workers=8).converged
        mark = backend.mark()
        steady = run(backend, path, workers=8)
        assert steady.converged and steady.errors == []
        lists = backend.lists_since(mark)
    assert backend.mutations_since(mark) == Counter()
    assert lists == Counter(
        {
            widgets.group_resource: 1,
            "configmaps": 1,
            "customresourcedefinitions.apiextensions.k8s.io": 1,
        }
    ), lists


def test_a_controller_that_selects_no_parent_lists_nothing_but_its_parents(
    backend: Backend, namespace: str, widgets: ResourceInfo, tmp_path: Path
) -> None:
    """Its children's type is listed alongside its parents only once a page holds a parent
    it selects: here none (its parentResource.labelSelector matches no Widget)."""
    for i in range(3):
        backend.admin.create(widgets, parent_obj(widgets, f"w{i}", namespace))
    selector = {"matchLabels": {"team": "nobody"}}
    parent = {"apiVersion": widgets.api_version, "resource": widgets.resource}
    controller = composite("widgets", widgets, [CM], {"sync": webhook("http://127.0.0.1:9/")})
    controller["spec"]["parentResource"] = {**parent, "labelSelector": selector}
    mark = backend.mark()
    result = run(backend, write_controllers(tmp_path, controller), workers=8)
    assert result.errors == [] and result.converged
    assert backend.lists_since(mark) == Counter({widgets.group_resource: 1})


@pytest.mark.parametrize("server_side", [False, True], ids=["client-side", "server-side"])
def test_dropped_child_is_deleted_and_changes_apply_in_place(
    backend: Backend,
    namespace: str,
    widgets: ResourceInfo,
    cms: ResourceInfo,
    tmp_path: Path,
    server_side: bool,
) -> None:
    backend.admin.create(widgets, parent_obj(widgets, "w", namespace))
    wanted = {"keep": {"v": "1"}, "drop": {"v": "1"}}

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        return {"children": [cm(name, data) for name, data in wanted.items()]}

    with serve(sync) as hook:
        path = write_controllers(
            tmp_path, composite("w", widgets, [CM], {"sync": webhook(hook.url)})
        )
        assert run(backend, path, server_side_apply=server_side).errors == []
        kept_uid = metadata(backend.admin.get(cms, "keep", namespace=namespace))["uid"]
        del wanted["drop"]
        wanted["keep"] = {"v": "2"}
        result = run(backend, path, server_side_apply=server_side)
        assert result.errors == []
    eventually(lambda: get(backend, cms, "drop", namespace) is None, what="drop to be deleted")
    kept = backend.admin.get(cms, "keep", namespace=namespace)
    assert kept["data"] == {"v": "2"} and metadata(kept)["uid"] == kept_uid


@pytest.mark.parametrize("server_side", [False, True], ids=["client-side", "server-side"])
def test_update_methods(
    backend: Backend, namespace: str, widgets: ResourceInfo, tmp_path: Path, server_side: bool
) -> None:
    """OnDelete leaves a changed child alone; Recreate deletes it and creates it again;
    InPlace updates it (checked above). Secrets stand in for a second child type."""
    secrets = backend.admin.discover("v1", "secrets")
    cms = backend.admin.discover("v1", "configmaps")
    backend.admin.create(widgets, parent_obj(widgets, "w", namespace))
    version = {"v": "1"}

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "s", "labels": {"app": "demo"}},
            "stringData": {"v": version["v"]},
        }
        return {"children": [cm("c", dict(version)), secret]}

    with serve(sync) as hook:
        controller = composite(
            "w",
            widgets,
            [("v1", "configmaps", "Recreate"), ("v1", "secrets", "OnDelete")],
            {"sync": webhook(hook.url)},
        )
        path = write_controllers(tmp_path, controller)
        assert run(backend, path, server_side_apply=server_side).errors == []
        first_cm = backend.admin.get(cms, "c", namespace=namespace)
        first_secret = backend.admin.get(secrets, "s", namespace=namespace)
        version["v"] = "2"
        result = run(backend, path, server_side_apply=server_side)
        assert result.errors == [] and result.converged
    recreated = backend.admin.get(cms, "c", namespace=namespace)
    assert recreated["data"] == {"v": "2"}
    assert metadata(recreated)["uid"] != metadata(first_cm)["uid"]
    kept = backend.admin.get(secrets, "s", namespace=namespace)
    assert metadata(kept)["resourceVersion"] == metadata(first_secret)["resourceVersion"]


def test_resync_after_seconds_is_honoured_within_the_run(
    backend: Backend, namespace: str, widgets: ResourceInfo, tmp_path: Path
) -> None:
    backend.admin.create(widgets, parent_obj(widgets, "w", namespace))
    calls: list[float] = []

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        calls.append(time.monotonic())
        # Ask for quick resyncs, then for one far past the run's budget.
        return {"resyncAfterSeconds": 0.3 if len(calls) < 4 else 3600}

    with serve(sync) as hook:
        path = write_controllers(tmp_path, composite("w", widgets, [], {"sync": webhook(hook.url)}))
        result = run(backend, path, max_duration=10.0)
    # Pass 1 writes the status, so pass 2 follows at once; passes 3 and 4 are the resyncs.
    assert len(calls) == 4
    assert calls[2] - calls[1] >= 0.25 and calls[3] - calls[2] >= 0.25
    assert any("resyncAfterSeconds 3600" in due for due in result.due_next_run)


def test_parent_crd_without_status_subresource_is_a_clear_error(
    backend: Backend, namespace: str, tmp_path: Path
) -> None:
    plain = backend.apply_crd("Plain", status=False)
    with serve(lambda request: {}) as hook:
        path = write_controllers(
            tmp_path, composite("plain", plain, [], {"sync": webhook(hook.url)})
        )
        result = run(backend, path)
        assert hook.requests == []
    assert len(result.errors) == 1
    assert "CompositeController plain" in result.errors[0]
    assert "no status subresource" in result.errors[0]


@pytest.mark.parametrize("server_side", [False, True], ids=["client-side", "server-side"])
def test_orphans_are_adopted_and_children_that_stop_matching_are_released(
    backend: Backend,
    namespace: str,
    widgets: ResourceInfo,
    cms: ResourceInfo,
    tmp_path: Path,
    server_side: bool,
) -> None:
    backend.admin.create(widgets, parent_obj(widgets, "w", namespace))
    orphan = cm("orphan")
    orphan["metadata"]["namespace"] = namespace
    backend.admin.create(cms, orphan)
    seen: list[list[str]] = []

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        names = sorted(request["children"]["ConfigMap.v1"])
        seen.append(names)
        return {"children": [cm(n) for n in names]}  # keep whatever it owns

    with serve(sync) as hook:
        path = write_controllers(
            tmp_path, composite("w", widgets, [CM], {"sync": webhook(hook.url)})
        )
        assert run(backend, path, server_side_apply=server_side).errors == []
        assert seen[0] == ["orphan"]  # the hook saw the adopted orphan
        adopted = backend.admin.get(cms, "orphan", namespace=namespace)
        assert metadata(adopted)["ownerReferences"][0]["name"] == "w"
        # Someone relabels it: it no longer matches, so it is released, not deleted.
        adopted["metadata"]["labels"] = {"app": "other"}
        backend.admin.update(cms, adopted)
        assert run(backend, path, server_side_apply=server_side).errors == []
    released = backend.admin.get(cms, "orphan", namespace=namespace)
    assert not metadata(released).get("ownerReferences")
    assert seen[-1] == []


def test_children_of_another_controller_are_never_touched(
    backend: Backend, namespace: str, widgets: ResourceInfo, cms: ResourceInfo, tmp_path: Path
) -> None:
    backend.admin.create(widgets, parent_obj(widgets, "w", namespace))
    boss = backend.admin.create(
        cms,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "boss", "namespace": namespace},
        },
    )
    theirs = cm("theirs")
    theirs["metadata"]["namespace"] = namespace
    theirs["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "boss",
            "uid": metadata(boss)["uid"],
            "controller": True,
        }
    ]
    before = backend.admin.create(cms, theirs)
    wanted: list[str] = []

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        assert "theirs" not in request["children"]["ConfigMap.v1"]
        return {"children": [cm(n) for n in wanted]}

    with serve(sync) as hook:
        path = write_controllers(
            tmp_path, composite("w", widgets, [CM], {"sync": webhook(hook.url)})
        )
        assert run(backend, path).errors == []
        wanted.append("theirs")  # asking for it by name does not take it over
        result = run(backend, path)
    assert len(result.errors) == 1 and "controlled by ConfigMap boss" in result.errors[0]
    after = backend.admin.get(cms, "theirs", namespace=namespace)
    assert metadata(after)["resourceVersion"] == metadata(before)["resourceVersion"]


def test_finalize_hook_tears_down_over_several_passes(
    backend: Backend, namespace: str, widgets: ResourceInfo, cms: ResourceInfo, tmp_path: Path
) -> None:
    backend.admin.create(widgets, parent_obj(widgets, "w", namespace))
    finalize_calls: list[tuple[list[str], bool]] = []
    lock = threading.Lock()

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        return {"children": [cm(f"c{i}") for i in range(3)]}

    def finalize(request: dict[str, Any]) -> dict[str, Any]:
        assert request["finalizing"] is True
        observed = sorted(request["children"]["ConfigMap.v1"])
        done = not observed
        with lock:
            finalize_calls.append((observed, done))
        # Ordered teardown: drop the last child each time; finalized once none is observed.
        return {"children": [cm(n) for n in observed[:-1]], "finalized": done}

    with serve(sync) as sync_hook, serve(finalize) as finalize_hook:
        hooks = {"sync": webhook(sync_hook.url), "finalize": webhook(finalize_hook.url)}
        path = write_controllers(tmp_path, composite("w", widgets, [CM], hooks))
        assert run(backend, path).errors == []
        parent = backend.admin.get(widgets, "w", namespace=namespace)
        assert "metacontroller.io/compositecontroller-w" in metadata(parent)["finalizers"]
        backend.admin.delete(widgets, "w", namespace=namespace)
        # Deleting waits for the finalizer: the parent is still there until the hook is done.
        assert metadata(backend.admin.get(widgets, "w", namespace=namespace))["deletionTimestamp"]
        result = run(backend, path)
        assert result.errors == []
    assert [observed for observed, _ in finalize_calls] == [
        ["c0", "c1", "c2"],
        ["c0", "c1"],
        ["c0"],
        [],
    ]
    assert [done for _, done in finalize_calls] == [False, False, False, True]
    eventually(lambda: get(backend, widgets, "w", namespace) is None, what="the parent to go")
    assert all(get(backend, cms, f"c{i}", namespace) is None for i in range(3))


@pytest.mark.parametrize(
    "failure",
    [
        "http-500",
        "bad-json",
        "timeout",
        "missing-name",
        "undeclared-kind",
        "other-namespace",
        "labels-not-matching",
    ],
)
def test_a_failing_parent_changes_nothing_and_the_others_converge(
    backend: Backend,
    namespace: str,
    widgets: ResourceInfo,
    cms: ResourceInfo,
    tmp_path: Path,
    failure: str,
) -> None:
    for name in ("good", "bad"):
        backend.admin.create(widgets, parent_obj(widgets, name, namespace))
    broken = {"on": False}

    def sync(request: dict[str, Any]) -> Any:
        name = request["parent"]["metadata"]["name"]
        if name == "good" or not broken["on"]:
            return {"children": [cm(f"{name}-child", {"round": str(broken["on"])})]}
        if failure == "http-500":
            return (500, {"error": "boom"})
        if failure == "bad-json":
            return (200, b"{not json")
        if failure == "timeout":
            time.sleep(1.5)
            return {}
        child = cm("bad-child")
        if failure == "missing-name":
            del child["metadata"]["name"]
        elif failure == "undeclared-kind":
            child["kind"] = "Secret"
        elif failure == "other-namespace":
            child["metadata"]["namespace"] = "default"
        else:
            child["metadata"]["labels"] = {"app": "elsewhere"}
        return {"children": [child], "status": {"broken": True}}

    with serve(sync) as hook:
        hooks = {"sync": webhook(hook.url, timeout="500ms")}
        path = write_controllers(tmp_path, composite("w", widgets, [CM], hooks))
        assert run(backend, path).errors == []
        bad_child = backend.admin.get(cms, "bad-child", namespace=namespace)
        bad_status = backend.admin.get(widgets, "bad", namespace=namespace).get("status")
        broken["on"] = True
        result = run(backend, path)
    assert len(result.errors) == 1 and "bad" in result.errors[0]
    # The failing parent: nothing deleted, nothing changed, not even its status.
    after = backend.admin.get(cms, "bad-child", namespace=namespace)
    assert metadata(after)["resourceVersion"] == metadata(bad_child)["resourceVersion"]
    assert backend.admin.get(widgets, "bad", namespace=namespace).get("status") == bad_status
    # The other parent converged.
    good = backend.admin.get(cms, "good-child", namespace=namespace)
    assert good["data"] == {"round": "True"}
    # And the failure is on record where `kubectl describe` shows it.
    warnings = eventually(
        lambda: [e for e in events_for(backend, namespace, "bad") if e["reason"] == "SyncError"],
        what="a SyncError event",
    )
    assert warnings[0]["type"] == "Warning"
    # the good parent's record says what the runs changed, and no warning
    good_events = events_for(backend, namespace, "good")
    assert sorted((e["type"], e["reason"]) for e in good_events) == [
        ("Normal", "Created"),
        ("Normal", "Updated"),
    ]
    updated = next(e for e in good_events if e["reason"] == "Updated")
    assert updated["message"] == f"updated 1 ConfigMap: ConfigMap {namespace}/good-child"
