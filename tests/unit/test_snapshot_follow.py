"""A pass's snapshot lists a controller's other types while its parents are listed
(`Snapshot.follow`): once a page of parents holds one the controller selects, in the
background, each type still once; what a background listing raised is raised to the type's
first user, until the controller's pass ends."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import pytest

from reconcile.cluster.errors import Forbidden
from reconcile.cluster.memory import MemoryCluster
from reconcile.cluster.types import Obj, ObjectList, ResourceInfo
from reconcile.runner.snapshot import Snapshot
from tests.support.wrapped import ForwardingCluster


class Listings(ForwardingCluster):
    """Counts each type's LIST requests and the threads that sent them; refuses `forbidden`'s
    LISTs as an API server refuses a user without the right."""

    def __init__(self, inner: MemoryCluster, forbidden: str = "") -> None:
        super().__init__(inner)
        self.forbidden = forbidden
        self.lists: Counter[str] = Counter()
        self.threads: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    def list(self, resource: ResourceInfo, **kwargs: Any) -> ObjectList:
        with self._lock:
            self.lists[resource.resource] += 1
            self.threads.setdefault(resource.resource, set()).add(threading.current_thread().name)
        if resource.resource == self.forbidden:
            raise Forbidden(f"{resource.resource} is forbidden: cannot list", status=403)
        return self.read(lambda: self.inner.list(resource, **kwargs))


def ANY(page: list[Obj]) -> bool:  # noqa: N802 (a constant's name)
    return True


POD_SPEC = {"containers": [{"name": "c", "image": "x"}]}


def cluster_with(pods: int, configmaps: int) -> MemoryCluster:
    inner = MemoryCluster()
    namespaces = inner.discover("v1", "namespaces")
    inner.create(namespaces, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}})
    for kind, resource, count in (("Pod", "pods", pods), ("ConfigMap", "configmaps", configmaps)):
        for i in range(count):
            inner.create(
                inner.discover("v1", resource),
                {
                    "apiVersion": "v1",
                    "kind": kind,
                    "metadata": {"name": f"{resource}-{i}", "namespace": "a"},
                    **({"spec": POD_SPEC} if kind == "Pod" else {}),
                },
            )
    return inner


def test_the_followers_are_listed_in_the_background_once_the_parents_have_objects() -> None:
    inner = cluster_with(pods=7, configmaps=5)
    cluster = Listings(inner)
    pods, configmaps = inner.discover("v1", "pods"), inner.discover("v1", "configmaps")
    snapshot = Snapshot(cluster, page_size=2)
    snapshot.follow(pods, [configmaps], ANY)

    assert len(snapshot.objects(pods)) == 7  # four pages: the first starts the configmaps
    snapshot.settle()
    assert cluster.threads["configmaps"] == {"list configmaps/v1"}
    assert len(snapshot.objects(configmaps)) == 5  # listed already: no request
    assert cluster.lists == Counter({"pods": 4, "configmaps": 3})


def test_a_parent_type_without_objects_leads_to_no_listing() -> None:
    inner = cluster_with(pods=0, configmaps=3)
    cluster = Listings(inner)
    pods, configmaps = inner.discover("v1", "pods"), inner.discover("v1", "configmaps")
    snapshot = Snapshot(cluster)
    snapshot.follow(pods, [configmaps], ANY)
    assert snapshot.objects(pods) == []
    snapshot.settle()
    assert cluster.lists == Counter({"pods": 1})


def test_a_type_listed_already_starts_its_followers_when_followed() -> None:
    inner = cluster_with(pods=2, configmaps=2)
    cluster = Listings(inner)
    pods, configmaps = inner.discover("v1", "pods"), inner.discover("v1", "configmaps")
    snapshot = Snapshot(cluster)
    snapshot.objects(pods)  # as another controller of the same parents listed them
    snapshot.follow(pods, [pods, configmaps], ANY)  # itself among them: not listed again
    snapshot.settle()
    assert cluster.lists == Counter({"pods": 1, "configmaps": 1})
    assert cluster.threads["configmaps"] == {"list configmaps/v1"}


def configmaps_failing_in_the_background() -> tuple[Listings, Snapshot, ResourceInfo]:
    """Pods listed, with configmaps following them in the background, where they are refused."""
    inner = cluster_with(pods=1, configmaps=1)
    cluster = Listings(inner, forbidden="configmaps")
    pods, configmaps = inner.discover("v1", "pods"), inner.discover("v1", "configmaps")
    snapshot = Snapshot(cluster)
    snapshot.follow(pods, [configmaps], ANY)
    snapshot.objects(pods)
    return cluster, snapshot, configmaps


def test_what_a_background_listing_raised_is_raised_to_the_types_first_user() -> None:
    cluster, snapshot, configmaps = configmaps_failing_in_the_background()
    background_done()  # (not `settle`: the controller's pass goes on)
    assert cluster.lists == Counter({"pods": 1, "configmaps": 1})
    with pytest.raises(Forbidden, match="configmaps is forbidden"):
        snapshot.objects(configmaps)  # the background's error, no second request
    assert cluster.lists == Counter({"pods": 1, "configmaps": 1})
    with pytest.raises(Forbidden):  # a later user lists again, as without the background
        snapshot.objects(configmaps)
    assert cluster.lists["configmaps"] == 2


def background_done() -> None:
    for thread in threading.enumerate():
        if thread.name.startswith("list "):
            thread.join()


def test_a_page_without_a_parent_the_controller_wants_leads_to_no_listing() -> None:
    inner = cluster_with(pods=5, configmaps=2)
    cluster = Listings(inner)
    pods, configmaps = inner.discover("v1", "pods"), inner.discover("v1", "configmaps")
    pages: list[list[str]] = []

    def selects_pods_4(page: list[Obj]) -> bool:
        pages.append([o["metadata"]["name"] for o in page])
        return any(o["metadata"]["name"] == "pods-4" for o in page)

    snapshot = Snapshot(cluster, page_size=2)
    snapshot.follow(pods, [configmaps], selects_pods_4)
    snapshot.objects(pods)
    snapshot.settle()
    assert pages == [["pods-0", "pods-1"], ["pods-2", "pods-3"], ["pods-4"]]
    assert cluster.lists["configmaps"] == 1  # once pods-4's page came
    counted = Listings(inner)
    nobody = Snapshot(counted, page_size=2)
    nobody.follow(pods, [configmaps], lambda page: False)  # a selector matching none
    nobody.objects(pods)
    nobody.settle()
    assert counted.lists == Counter({"pods": 3})


def test_a_background_failure_is_forgotten_when_the_controllers_pass_ends() -> None:
    """Another controller using the type later lists it again: the failure (a moment's 503,
    a type the first controller may not list) was not its own."""
    cluster, snapshot, configmaps = configmaps_failing_in_the_background()
    snapshot.settle()  # the controller's pass ends without reading configmaps
    cluster.forbidden = ""
    assert len(snapshot.objects(configmaps)) == 1
    assert cluster.lists["configmaps"] == 2
