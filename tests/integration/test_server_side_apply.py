"""`--apply-strategy server-side` end to end, on the real API server and on the memory
backend: no last-applied annotation, fields owned by the field manager `reconcile`, removals,
conflicts with other managers (and `--force-conflicts`), a converged run that sends nothing, and
a cluster moved from one strategy to the other with no child recreated and no field lost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reconcile.cluster.types import Obj, ResourceInfo
from reconcile.engine.apply import LAST_APPLIED_ANNOTATION
from reconcile.objects import managed_fields as mf
from reconcile.objects.meta import metadata
from tests.integration.test_composite import CM, cm, parent_obj
from tests.support.backends import Backend
from tests.support.controllers import composite, run, webhook, write_controllers
from tests.support.controlplane import CURRENT_RELEASE, OLDEST_RELEASE
from tests.support.hookserver import serve

pytestmark = pytest.mark.releases(
    CURRENT_RELEASE,
    OLDEST_RELEASE,
    why="server-side apply was beta in 1.20 (GA in 1.22): field ownership and conflicts on both",
)

SERVER_SIDE = {"server_side_apply": True}


def managers(obj: Obj) -> dict[tuple[str, str], mf.FieldSet]:
    return {
        (str(e["manager"]), str(e["operation"])): mf.parse_fields(e.get("fieldsV1"))
        for e in mf.entries(obj)
        if not e.get("subresource")
    }


def annotations_of(obj: Obj) -> dict[str, str]:
    return dict(metadata(obj).get("annotations") or {})


class Hook:
    """A sync hook answering with `children` (changed by the test between runs)."""

    def __init__(self, *children: Obj) -> None:
        self.children = list(children)

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"children": self.children}


def test_server_side_apply_owns_removes_and_converges(
    backend: Backend, namespace: str, widgets: ResourceInfo, cms: ResourceInfo, tmp_path: Path
) -> None:
    backend.admin.create(widgets, parent_obj(widgets, "w", namespace))
    hook = Hook(cm("c", {"a": "1", "b": "2"}, tier="web"))
    with serve(hook) as server:
        path = write_controllers(
            tmp_path, composite("w", widgets, [CM], {"sync": webhook(server.url)})
        )
        first = run(backend, path, **SERVER_SIDE)
        assert first.errors == [] and first.converged
        child = backend.admin.get(cms, "c", namespace=namespace)
        assert LAST_APPLIED_ANNOTATION not in annotations_of(child)
        owned = managers(child)[("reconcile", "Apply")]
        assert ("f:data", "f:a") in owned and ("f:metadata", "f:labels", "f:tier") in owned
        uid = metadata(child)["uid"]

        mark = backend.mark()
        assert run(backend, path, **SERVER_SIDE).errors == []
        assert backend.mutations_since(mark) == {}  # converged: nothing sent

        hook.children = [cm("c", {"a": "1"})]  # drops data.b and the tier label
        mark = backend.mark()
        result = run(backend, path, **SERVER_SIDE)
        assert result.errors == [] and result.converged
        sent = backend.mutations_since(mark)  # one apply (and the Event saying so)
        assert sent["patch"] == 1 and sent["update"] == sent["delete"] == 0
    child = backend.admin.get(cms, "c", namespace=namespace)
    assert child["data"] == {"a": "1"}
    assert "tier" not in metadata(child)["labels"]
    assert metadata(child)["uid"] == uid


def test_a_field_another_manager_owns_is_a_conflict_until_forced(
    backend: Backend, namespace: str, widgets: ResourceInfo, cms: ResourceInfo, tmp_path: Path
) -> None:
    for name in ("w", "v"):
        parent = parent_obj(widgets, name, namespace)
        parent["spec"]["selector"] = {"matchLabels": {"app": name}}
        backend.admin.create(widgets, parent)

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        name = request["parent"]["metadata"]["name"]
        child = cm(f"{name}-c", {"replicas": "1"})
        child["metadata"]["labels"] = {"app": name}
        return {"children": [child]}

    editor = backend.as_manager("editor")
    with serve(sync) as server:
        path = write_controllers(
            tmp_path, composite("w", widgets, [CM], {"sync": webhook(server.url)})
        )
        assert run(backend, path, **SERVER_SIDE).errors == []
        # Someone else changes a field we apply, and adds one we do not.
        edited = backend.admin.get(cms, "w-c", namespace=namespace)
        edited["data"] = {"replicas": "5", "note": "mine"}
        editor.update(cms, edited)
        theirs = backend.admin.get(cms, "v-c", namespace=namespace)
        theirs["data"] = {"replicas": "1", "note": "mine"}  # same value: shared, no conflict
        editor.update(cms, theirs)

        mark = backend.mark()
        result = run(backend, path, **SERVER_SIDE)
        assert len(result.errors) == 1, result.errors
        error = result.errors[0]
        assert "ConfigMap" in error and "w-c" in error
        assert '"editor"' in error and ".data.replicas" in error
        assert backend.admin.get(cms, "w-c", namespace=namespace)["data"]["replicas"] == "5"
        assert backend.mutations_since(mark).get("patch", 0) <= 1  # tried once, not in a loop

        forced = run(backend, path, **SERVER_SIDE, force_conflicts=True)
        assert forced.errors == [] and forced.converged
    child = backend.admin.get(cms, "w-c", namespace=namespace)
    assert child["data"] == {"replicas": "1", "note": "mine"}  # taken back; their field kept
    owners = managers(child)
    assert ("f:data", "f:replicas") in owners[("reconcile", "Apply")]
    assert ("f:data", "f:replicas") not in owners.get(("editor", "Update"), frozenset())
    assert backend.admin.get(cms, "v-c", namespace=namespace)["data"]["note"] == "mine"


@pytest.mark.parametrize("order", ["client-then-server", "server-then-client"])
def test_switching_strategies_migrates_without_recreating_or_losing_fields(
    backend: Backend,
    namespace: str,
    widgets: ResourceInfo,
    cms: ResourceInfo,
    tmp_path: Path,
    order: str,
) -> None:
    first, second = (False, True) if order == "client-then-server" else (True, False)
    backend.admin.create(widgets, parent_obj(widgets, "w", namespace))
    hook = Hook(cm("c", {"a": "1", "b": "2"}, tier="web"))
    editor = backend.as_manager("editor")
    with serve(hook) as server:
        path = write_controllers(
            tmp_path, composite("w", widgets, [CM], {"sync": webhook(server.url)})
        )
        assert run(backend, path, server_side_apply=first).errors == []
        before = backend.admin.get(cms, "c", namespace=namespace)
        before["metadata"]["annotations"] = {**annotations_of(before), "owner": "someone"}
        editor.update(cms, before)  # a field only another manager sets

        moved = run(backend, path, server_side_apply=second)
        assert moved.errors == [] and moved.converged
        after = backend.admin.get(cms, "c", namespace=namespace)
        assert metadata(after)["uid"] == metadata(before)["uid"]
        assert after["data"] == {"a": "1", "b": "2"}
        assert annotations_of(after)["owner"] == "someone"
        owner = ("f:metadata", "f:annotations", "f:owner")
        assert owner in managers(after)[("editor", "Update")]  # their ownership kept too
        if second:
            assert LAST_APPLIED_ANNOTATION not in annotations_of(after)
            assert ("reconcile", "Apply") in managers(after)

        mark = backend.mark()
        assert run(backend, path, server_side_apply=second).errors == []
        assert backend.mutations_since(mark) == {}  # converged after the move

        hook.children = [cm("c", {"a": "1"})]  # removals still work after the move
        assert run(backend, path, server_side_apply=second).errors == []
    child = backend.admin.get(cms, "c", namespace=namespace)
    assert child["data"] == {"a": "1"}
    assert "tier" not in metadata(child)["labels"]
    assert annotations_of(child)["owner"] == "someone"
    assert metadata(child)["uid"] == metadata(before)["uid"]


def test_a_dry_run_with_server_side_apply_sends_nothing(
    backend: Backend, namespace: str, widgets: ResourceInfo, cms: ResourceInfo, tmp_path: Path
) -> None:
    backend.admin.create(widgets, parent_obj(widgets, "w", namespace))
    hook = Hook(cm("c", {"a": "1"}))
    with serve(hook) as server:
        path = write_controllers(
            tmp_path, composite("w", widgets, [CM], {"sync": webhook(server.url)})
        )
        assert run(backend, path, **SERVER_SIDE).errors == []
        hook.children = [cm("c", {"a": "2"})]
        mark = backend.mark()
        result = run(backend, path, **SERVER_SIDE, dry_run=True)
        assert backend.mutations_since(mark) == {}
    [update] = [
        a
        for p in result.passes
        for r in p.parents()
        for a in r.actions
        if a.action.kind.value == "update"
    ]
    assert update.action.after is not None and update.action.after["data"] == {"a": "2"}
