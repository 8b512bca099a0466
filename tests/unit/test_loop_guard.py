"""The loop guard with plain objects: a change that moves on is not the same change needed
again, the status an update writes (no status subresource) is named, and an object deleted and
created again (or created and deleted) in a later pass is left alone, unless a Recreate or
another parent explains it."""

from __future__ import annotations

from typing import Any

from reconcile.engine.actions import RECREATE_REASON, Action, ActionKind
from reconcile.engine.changes import field_changes
from reconcile.objects.resource import ResourceInfo
from reconcile.results import Divergence
from reconcile.runner.loop_guard import LoopGuard

GAUGES = ResourceInfo("example.com", "v1", "gauges", "Gauge", namespaced=True, has_status=False)
CONFIGMAPS = ResourceInfo("", "v1", "configmaps", "ConfigMap", namespaced=True)
OLD_INGRESSES = ResourceInfo("extensions", "v1beta1", "ingresses", "Ingress", namespaced=True)
INGRESSES = ResourceInfo("networking.k8s.io", "v1", "ingresses", "Ingress", namespaced=True)


def obj(
    kind: str, name: str, version: str = "1", uid: str = "", owner: str = "p1", **rest: Any
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "resourceVersion": version}
    if uid:
        meta["uid"] = uid
    if owner:
        meta["ownerReferences"] = [{"uid": owner, "controller": True, "name": "p", "kind": "P"}]
    return {"apiVersion": "v1", "kind": kind, "metadata": meta, **rest}


def gauge(replicas: int, version: str = "1") -> dict[str, Any]:
    return obj("Gauge", "g", version, uid="g-uid", owner="", status={"replicas": replicas})


def update(before: dict[str, Any], after: dict[str, Any]) -> Action:
    return Action(ActionKind.UPDATE, GAUGES, before, after, "status")


def send(guard: LoopGuard, action: Action, pass_number: int, returned: Any = None) -> str:
    """What the guard says of the action: "" when it is sent (and the server accepted it)."""
    guarded = guard.before(action, pass_number)
    if not guarded.held:
        guard.after(guarded, action, returned, pass_number)
    return guarded.held


def test_the_status_an_update_writes_is_compared_and_named() -> None:
    assert field_changes(gauge(1), gauge(0)) == []
    (change,) = field_changes(gauge(1), gauge(0), with_status=True)
    assert change.describe() == "status.replicas: the cluster keeps `0` where the hook returns `1`"


def test_a_status_that_moves_on_is_a_new_change() -> None:
    guard = LoopGuard()
    assert send(guard, update(gauge(5), gauge(0)), 1, returned=gauge(0, "2")) == ""
    assert send(guard, update(gauge(0, "2"), gauge(1, "2")), 2, returned=gauge(1, "3")) == ""
    assert guard.not_converging == {}


def test_the_same_change_from_the_same_value_is_named_with_its_fields() -> None:
    guard = LoopGuard()
    assert send(guard, update(gauge(5), gauge(1)), 1, returned=gauge(1, "2")) == ""
    held = send(guard, update(gauge(5, "3"), gauge(1, "3")), 2)
    assert held == "left alone: Gauge ns/g does not converge (pass 2)"
    (stuck,) = guard.not_converging.values()
    assert stuck.how is Divergence.REVERTED
    assert "(status.replicas: the cluster keeps `5` where the hook returns `1`)" in stuck.describe()


def test_an_update_that_changes_nothing_the_guard_compares_is_never_the_same_change() -> None:
    guard = LoopGuard()
    before = obj("Gauge", "g", uid="g-uid", owner="")
    after = obj("Gauge", "g", uid="g-uid", owner="")
    after["metadata"]["managedFields"] = [{"manager": "x"}]
    for pass_number in (1, 2, 3):
        assert send(guard, update(before, after), pass_number) == ""
    assert guard.not_converging == {}


def create(resource: ResourceInfo, owner: str = "p1") -> Action:
    return Action(ActionKind.CREATE, resource, None, obj("Ingress", "web", owner=owner), "missing")


def delete(resource: ResourceInfo, uid: str, reason: str = "not desired") -> Action:
    return Action(ActionKind.DELETE, resource, obj("Ingress", "web", uid=uid), None, reason)


def test_an_object_created_then_deleted_under_another_version_is_left_alone() -> None:
    guard = LoopGuard()
    assert send(guard, create(INGRESSES), 1, returned=obj("Ingress", "web", uid="u1")) == ""
    held = send(guard, delete(OLD_INGRESSES, "u1"), 2)
    assert held == "left alone: Ingress ns/web does not converge (pass 2)"
    (stuck,) = guard.not_converging.values()
    assert stuck.how is Divergence.RECREATED
    assert stuck.describe().startswith(
        "Ingress ns/web does not converge: pass 1 created it as ingresses.networking.k8s.io "
        "and pass 2 deletes it (not desired) as ingresses.extensions, so every run would do "
        "the same."
    )
    # both of its names are left alone from then on
    assert send(guard, create(INGRESSES), 3) == held
    assert send(guard, delete(OLD_INGRESSES, "u1"), 3) == held


def test_an_object_deleted_then_created_again_is_left_alone() -> None:
    guard = LoopGuard()
    assert send(guard, delete(INGRESSES, "u1"), 1) == ""
    assert send(guard, create(INGRESSES), 1, returned=obj("Ingress", "web", uid="u2")) == ""
    held = send(guard, create(INGRESSES), 2)
    assert held == "left alone: Ingress ns/web does not converge (pass 2)"
    (stuck,) = guard.not_converging.values()
    assert "pass 1 deleted it and pass 2 creates it again" in stuck.describe()


def test_a_recreate_and_a_move_to_another_parent_are_not_loops() -> None:
    guard = LoopGuard()
    assert send(guard, delete(INGRESSES, "u1", RECREATE_REASON), 1) == ""
    assert send(guard, create(INGRESSES), 2, returned=obj("Ingress", "web", uid="u2")) == ""
    other = ResourceInfo("", "v1", "configmaps", "ConfigMap", namespaced=True)
    moved = Action(ActionKind.DELETE, other, obj("ConfigMap", "c", uid="c1"), None, "not desired")
    assert send(guard, moved, 2) == ""
    taken = Action(ActionKind.CREATE, other, None, obj("ConfigMap", "c", owner="p2"), "missing")
    assert send(guard, taken, 3, returned=obj("ConfigMap", "c", uid="c2", owner="p2")) == ""
    assert guard.not_converging == {}
    # the recreated object deleted again is a loop (it never stays as desired)
    assert send(guard, delete(INGRESSES, "u2", RECREATE_REASON), 3) != ""
