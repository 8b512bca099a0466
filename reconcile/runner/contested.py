"""Parents that two controllers would both sync: refused, so that neither undoes the other."""

from __future__ import annotations

from collections import defaultdict

from reconcile.cluster.errors import ApiError
from reconcile.cluster.protocol import Cluster
from reconcile.objects.meta import is_deleting, uid_of
from reconcile.runner.snapshot import Snapshot
from reconcile.runner.sources import parent_kind
from reconcile.specs.composite import CompositeController


def contested_parents(
    cluster: Cluster, snapshot: Snapshot, controllers: list[CompositeController]
) -> dict[str, list[str]]:
    """Parent uid -> the names of the controllers whose `parentResource.labelSelector` selects
    it, for every parent selected by more than one (a parent being deleted is left to the
    finalizers). Listing uses the pass's snapshot, so it costs no extra request."""
    by_kind: dict[tuple[str, str], list[CompositeController]] = defaultdict(list)
    for controller in controllers:
        by_kind[parent_kind(controller)].append(controller)
    contested: dict[str, list[str]] = {}
    for same in by_kind.values():
        if len(same) < 2:
            continue
        try:
            resource = cluster.discover(same[0].parent.api_version, same[0].parent.resource)
            parents = snapshot.objects(resource)
        except ApiError:
            continue  # each controller reports the unknown resource itself
        for parent in parents:
            if is_deleting(parent):
                continue
            names = sorted(c.name for c in same if c.parent.label_selector.matches(parent))
            if len(names) > 1:
                contested[uid_of(parent)] = names
    return contested
