"""Two declared resources that list the same objects, told from discovery (one group and
resource at two versions, one storage) or from the pass's lists (the same uids)."""

from __future__ import annotations

import pytest

from reconcile.cluster.memory import MemoryCluster
from reconcile.engine.flow import ControllerError
from reconcile.objects.meta import Obj
from reconcile.objects.resource import ResourceInfo
from reconcile.runner.overlaps import refuse_shared_objects
from reconcile.runner.snapshot import Snapshot

OLD = ResourceInfo("extensions", "v1beta1", "ingresses", "Ingress", True)
NEW = ResourceInfo("networking.k8s.io", "v1", "ingresses", "Ingress", True)
CONFIGMAPS = ResourceInfo("", "v1", "configmaps", "ConfigMap", True)


class Lists(Snapshot):
    """A pass's lists, as given."""

    def __init__(self, lists: dict[ResourceInfo, list[Obj]]) -> None:
        super().__init__(MemoryCluster())
        self.lists = lists
        self.listed_types: list[ResourceInfo] = []

    def objects(self, resource: ResourceInfo) -> list[Obj]:
        self.listed_types.append(resource)
        return self.lists.get(resource, [])


def ingress(uid: str) -> Obj:
    return {"kind": "Ingress", "metadata": {"name": "web", "namespace": "ns", "uid": uid}}


def refused(resources: list[ResourceInfo], lists: Lists) -> str:
    with pytest.raises(ControllerError) as caught:
        refuse_shared_objects("CompositeController c", "spec.childResources", resources, lists)
    return str(caught.value)


def test_one_group_and_resource_at_two_versions_is_refused_before_any_list() -> None:
    v1 = ResourceInfo("example.com", "v1", "things", "Thing", True)
    v2 = ResourceInfo("example.com", "v2", "things", "Thing", True)
    lists = Lists({})
    assert refused([CONFIGMAPS, v1, v2], lists).startswith(
        "CompositeController c: spec.childResources[1] and spec.childResources[2] list the "
        "same objects (things.example.com is served at v1 and v2: the same objects); "
    )
    assert lists.listed_types == []


def test_one_storage_under_two_groups_is_refused_before_any_list() -> None:
    old = ResourceInfo("extensions", "v1beta1", "ingresses", "Ingress", True, storage_hash="h")
    new = ResourceInfo("networking.k8s.io", "v1", "ingresses", "Ingress", True, storage_hash="h")
    lists = Lists({})
    assert "(ingresses (extensions/v1beta1) and ingresses (networking.k8s.io/v1) are stored " in (
        refused([old, new], lists)
    )
    assert lists.listed_types == []
    assert old == ResourceInfo("extensions", "v1beta1", "ingresses", "Ingress", True)


def test_the_same_uids_in_two_lists_are_refused_naming_one() -> None:
    lists = Lists({OLD: [ingress("u1")], NEW: [ingress("u2"), ingress("u1")]})
    assert (
        "(ingresses (extensions/v1beta1) and ingresses (networking.k8s.io/v1) both list "
        "Ingress ns/web, uid u1)"
    ) in refused([OLD, NEW], lists)


def test_other_kinds_are_not_listed_to_tell_and_distinct_objects_pass() -> None:
    lists = Lists({OLD: [ingress("u1")], NEW: [ingress("u2")]})
    refuse_shared_objects("CompositeController c", "spec.childResources", [OLD, NEW], lists)
    lists = Lists({})
    refuse_shared_objects("CompositeController c", "spec.childResources", [CONFIGMAPS, NEW], lists)
    assert lists.listed_types == []
