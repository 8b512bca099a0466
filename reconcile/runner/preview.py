"""The cluster as it would be after the manifests' planned changes, for a dry run's controllers:
what a merge of the change would make the hooks see (new parents, changed specs, removed
parents being finalized), with no write to the real cluster.

A read-through overlay on the real cluster: every read goes to it (one LIST per type, as in
any pass) and the planned objects are laid over the answer. Writes are refused: a dry run
sends none.
"""

from __future__ import annotations

import copy
import hashlib
from datetime import UTC, datetime

from reconcile.cluster.errors import MethodNotAllowed, NotFound
from reconcile.cluster.protocol import Cluster
from reconcile.cluster.types import Obj, ObjectList, Propagation, ResourceInfo
from reconcile.engine.actions import Action, ActionKind
from reconcile.objects.meta import metadata, name_of, namespace_of
from reconcile.objects.selectors import parse_label_selector

Key = tuple[str, str, str]  # group_resource, namespace, name


class PreviewCluster:
    def __init__(self, base: Cluster, planned: list[Action], new_kinds: list[ResourceInfo]) -> None:
        self.base = base
        self.stats = base.stats
        self._new_kinds = {info.api_version + "/" + info.kind: info for info in new_kinds}
        self._objects: dict[Key, Obj | None] = {}  # None: deleted
        self._resources: dict[str, ResourceInfo] = {}
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        for action in planned:
            key = (action.resource.group_resource, action.namespace, action.name)
            self._resources[action.resource.group_resource] = action.resource
            if action.kind is ActionKind.DELETE:
                before = action.before or {}
                if metadata(before).get("finalizers"):
                    deleting = copy.deepcopy(before)
                    metadata(deleting)["deletionTimestamp"] = now
                    self._objects[key] = deleting
                else:
                    self._objects[key] = None
            elif action.after is not None:
                after = copy.deepcopy(action.after)
                meta = metadata(after)
                if action.kind is ActionKind.CREATE:
                    digest = hashlib.sha256(repr(key).encode()).hexdigest()
                    meta["uid"] = (
                        f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"
                    )
                    meta["creationTimestamp"] = now
                    meta["resourceVersion"] = "0"
                    meta["generation"] = 1
                self._objects[key] = after

    def discover(self, api_version: str, resource: str) -> ResourceInfo:
        try:
            return self.base.discover(api_version, resource)
        except NotFound:
            for info in self._new_kinds.values():
                if info.api_version == api_version and resource in (
                    info.kind,
                    info.resource,
                    info.singular,
                ):
                    return info
            raise

    def preferred_version(self, group: str) -> str:
        try:
            return self.base.preferred_version(group)
        except NotFound:
            for info in self._new_kinds.values():
                if info.group == group:
                    return info.api_version
            raise

    def server_release(self) -> str:
        return self.base.server_release()

    def served_resources(self) -> list[ResourceInfo]:
        known = {info.group_resource for info in self.base.served_resources()}
        new = [info for info in self._new_kinds.values() if info.group_resource not in known]
        return self.base.served_resources() + new

    def list(
        self,
        resource: ResourceInfo,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> ObjectList:
        try:
            page = self.base.list(
                resource,
                namespace=namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                limit=limit,
                continue_token=continue_token,
            )
        except NotFound:
            if resource.api_version + "/" + resource.kind not in self._new_kinds:
                raise
            page = ObjectList([])
        overlaid = {k for k in self._objects if k[0] == resource.group_resource}
        items = [
            obj
            for obj in page.items
            if (resource.group_resource, namespace_of(obj), name_of(obj)) not in overlaid
        ]
        if not page.continue_token:  # the last page: the planned objects join it
            selector = parse_label_selector(label_selector)
            for key in sorted(overlaid):
                obj = self._objects[key]
                if obj is None or (namespace and key[1] != namespace):
                    continue
                if selector.matches(obj):
                    items.append(copy.deepcopy(obj))
        return ObjectList(items, page.resource_version, page.continue_token, None)

    def get(self, resource: ResourceInfo, name: str, *, namespace: str | None = None) -> Obj:
        key = (resource.group_resource, (namespace or "") if resource.namespaced else "", name)
        if key in self._objects:
            obj = self._objects[key]
            if obj is None:
                raise NotFound(f'{resource.group_resource} "{name}" not found')
            return copy.deepcopy(obj)
        return self.base.get(resource, name, namespace=namespace)

    def create(self, resource: ResourceInfo, obj: Obj) -> Obj:
        raise _read_only()

    def update(self, resource: ResourceInfo, obj: Obj) -> Obj:
        raise _read_only()

    def update_status(self, resource: ResourceInfo, obj: Obj) -> Obj:
        raise _read_only()

    def apply(
        self, resource: ResourceInfo, obj: Obj, *, field_manager: str, force: bool = False
    ) -> Obj:
        raise _read_only()

    def delete(
        self,
        resource: ResourceInfo,
        name: str,
        *,
        namespace: str | None = None,
        uid: str | None = None,
        resource_version: str | None = None,
        propagation: Propagation | None = None,
    ) -> None:
        raise _read_only()

    def dry_run_view(self) -> PreviewCluster:
        """Itself: its writes are refused either way (`--dry-run=server` sends its writes to
        the cluster under the preview, as dry runs)."""
        return self


def _read_only() -> MethodNotAllowed:
    return MethodNotAllowed("the preview of a change is read-only (a dry run sends no writes)")
