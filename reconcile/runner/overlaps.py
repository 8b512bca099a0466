"""Two declared resources of one controller that list the same objects.

A kind served under two API versions is one set of objects: a CRD's `v1` and `v2`, or on older
clusters `extensions/v1beta1` and `networking.k8s.io/v1` ingresses. A controller declaring both
among what it writes (a CompositeController's children, a DecoratorController's attachments, a
MapController's outputs) sees each object twice: the hook returns it under one version, so the
run deletes it under the other as no longer desired and creates it again, run after run. Such a
controller is refused before it writes anything, naming both fields; the others go on.

Discovery tells before any list: the same group and resource under two versions, or two
resources with the same storage (its `storageVersionHash`, which real API servers give); and
the pass's LIST results show the same objects under two groups, as the same uids, wherever
discovery says nothing of the storage."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from reconcile.engine.flow import ControllerError
from reconcile.objects.meta import identity, uid_of
from reconcile.objects.resource import ResourceInfo
from reconcile.runner.snapshot import Snapshot


def refuse_shared_objects(
    where: str, field: str, resources: Sequence[ResourceInfo], snapshot: Snapshot
) -> None:
    """ControllerError when two of the resources `field` (`spec.childResources`) declares
    list the same objects. Only resources of one kind are listed to tell (the pass lists them
    anyway to plan)."""
    pairs = list(combinations(enumerate(resources), 2))
    for (i, first), (j, second) in pairs:
        if first.group_resource == second.group_resource:
            why = f"{first.group_resource} is served at {first.version} and {second.version}"
        elif first.storage_hash and first.storage_hash == second.storage_hash:
            why = (
                f"{first.resource} ({first.api_version}) and {second.resource} "
                f"({second.api_version}) are stored as one resource, as discovery says"
            )
        else:
            continue
        _refuse(where, f"{field}[{i}]", f"{field}[{j}]", f"{why}: the same objects")
    for (i, first), (j, second) in pairs:
        if first.kind != second.kind:
            continue
        uids = {uid_of(obj) for obj in snapshot.objects(first)}
        shared = next((o for o in snapshot.objects(second) if uid_of(o) in uids), None)
        if shared is not None:
            _refuse(
                where,
                f"{field}[{i}]",
                f"{field}[{j}]",
                f"{first.resource} ({first.api_version}) and {second.resource} "
                f"({second.api_version}) both list {identity(shared)}, uid {uid_of(shared)}",
            )


def _refuse(where: str, first: str, second: str, why: str) -> None:
    raise ControllerError(
        f"{where}: {first} and {second} list the same objects ({why}); the one the hook does "
        "not return would be deleted as the other is created, run after run. Declare the "
        "resource once, at the version the hook returns; nothing is written for this "
        "controller until then"
    )
