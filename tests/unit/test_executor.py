"""The executor sends a parent's independent writes together, keeps their results in plan
order, and stops after a batch in which a write failed."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from reconcile.cluster.errors import Invalid
from reconcile.cluster.memory import MemoryCluster
from reconcile.cluster.types import Obj
from reconcile.engine.actions import Action, ActionKind
from reconcile.runner.execute import NOT_ATTEMPTED, Executor
from tests.support.wrapped import ForwardingCluster

_T = TypeVar("_T")


class Gate(ForwardingCluster):
    """Holds every create until `expected` are in flight at once (or a timeout passes), so a
    test can tell writes sent together from writes sent one after another."""

    def __init__(self, inner: MemoryCluster, expected: int) -> None:
        super().__init__(inner)
        self.barrier = threading.Barrier(expected, timeout=5)
        self.together = True
        self.refuse: set[str] = set()

    def write(self, what: str, body: Obj | None, call: Callable[[], _T]) -> _T:
        if what.startswith("create") and body is not None:
            try:
                self.barrier.wait()
            except threading.BrokenBarrierError:
                self.together = False
            if body["metadata"]["name"] in self.refuse:
                raise Invalid(f"{body['metadata']['name']} refused")
        return call()


def configmap(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"k": name},
    }


def creates(cluster: MemoryCluster, *names: str) -> list[Action]:
    cms = cluster.discover("v1", "configmaps")
    return [Action(ActionKind.CREATE, cms, None, configmap(n), "desired, missing") for n in names]


def test_independent_creates_go_together_and_report_in_order() -> None:
    store = MemoryCluster()
    gate = Gate(store, expected=4)
    executor = Executor(gate, dry_run=False)
    try:
        results = executor.execute(creates(store, "a", "b", "c", "d"), together=True)
    finally:
        executor.close()
    assert gate.together
    assert [r.action.name for r in results] == ["a", "b", "c", "d"]
    assert all(r.applied for r in results)


def test_a_failed_write_stops_what_comes_after_its_batch() -> None:
    store = MemoryCluster()
    gate = Gate(store, expected=2)
    gate.refuse = {"b"}
    cms = store.discover("v1", "configmaps")
    changed = {**configmap("a"), "data": {"k": "changed"}}
    actions = [
        *creates(store, "a", "b"),
        Action(ActionKind.UPDATE, cms, configmap("a"), changed, "changed"),
    ]
    executor = Executor(gate, dry_run=False)
    try:
        results = executor.execute(actions, together=True)
    finally:
        executor.close()
    assert [(r.action.name, r.applied) for r in results] == [
        ("a", True),
        ("b", False),
        ("a", False),
    ]
    assert results[1].error is not None and "refused" in results[1].error
    assert results[2].error is not None and results[2].error.startswith(NOT_ATTEMPTED)


def test_the_status_is_written_whatever_became_of_the_children() -> None:
    """As Metacontroller: "continue to update status regardless" of a child's failure; what
    else came after the failure is not attempted."""
    store = MemoryCluster()
    cms, namespaces = store.discover("v1", "configmaps"), store.discover("v1", "namespaces")
    parent = store.create(
        namespaces, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "p"}}
    )
    gate = Gate(store, expected=1)
    gate.refuse = {"b"}
    with_status = {**parent, "status": {"phase": "Active"}}
    changed = {**configmap("a"), "data": {"k": "changed"}}
    actions = [
        *creates(store, "b"),
        Action(ActionKind.UPDATE, cms, configmap("a"), changed, "changed"),
        Action(ActionKind.STATUS, namespaces, parent, with_status, "status from the hook"),
    ]
    executor = Executor(gate, dry_run=False)
    try:
        results = executor.execute(actions, together=True)
    finally:
        executor.close()
    assert [(r.action.kind.value, r.applied) for r in results] == [
        ("create", False),
        ("update", False),
        ("status", True),
    ]
    assert results[1].error is not None and results[1].error.startswith(NOT_ATTEMPTED)


def test_without_together_writes_go_one_at_a_time() -> None:
    store = MemoryCluster()
    gate = Gate(store, expected=2)
    gate.barrier = threading.Barrier(2, timeout=0.2)
    executor = Executor(gate, dry_run=False)
    results = executor.execute(creates(store, "a", "b"))
    assert not gate.together  # the first create waited alone
    assert all(r.applied for r in results)


def test_a_server_dry_run_checks_every_action_and_stores_nothing() -> None:
    store = MemoryCluster()
    cms = store.discover("v1", "configmaps")
    namespaces = store.discover("v1", "namespaces")
    invalid = configmap("Not-A-Name")
    new_namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fresh"}}
    in_it = {**configmap("inside"), "metadata": {"name": "inside", "namespace": "fresh"}}
    actions = [
        Action(ActionKind.CREATE, cms, None, invalid, "desired, missing"),
        *creates(store, "a"),
        Action(ActionKind.STATUS, cms, configmap("a"), configmap("a"), "status"),
        Action(ActionKind.CREATE, namespaces, None, new_namespace, "desired, missing"),
        Action(ActionKind.CREATE, cms, None, in_it, "desired, missing"),
    ]
    version = store.resource_version
    executor = Executor(store, dry_run=True, server_dry_run=True)
    try:
        results = executor.execute(actions, together=True)
    finally:
        executor.close()
    assert [(r.validated, r.applied, bool(r.error)) for r in results] == [
        (False, False, True),  # refused by the server, and the next ones are checked anyway
        (True, False, False),
        (False, False, False),  # the ConfigMap exists only on paper
        (True, False, False),
        (False, False, False),  # so does its namespace
    ]
    assert "is invalid" in results[0].error
    assert results[2].not_validated == "the object is created by this dry run only"
    assert results[4].not_validated == "its namespace fresh is created by this dry run only"
    assert store.resource_version == version
    assert [o["metadata"]["name"] for o in store.all_objects() if o["kind"] == "ConfigMap"] == []
