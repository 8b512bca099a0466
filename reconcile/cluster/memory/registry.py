"""Discovery: the resources served, built-in and from CRDs, looked up within an apiVersion by
plural, singular, short name or kind, exactly as the live backend looks names up."""

from __future__ import annotations

from reconcile.cluster.discovery import find_resource
from reconcile.cluster.errors import NotFound
from reconcile.cluster.types import ResourceInfo


class ResourceRegistry:
    def __init__(self, builtin: tuple[ResourceInfo, ...]) -> None:
        # apiVersion -> plural -> resource, for everything served
        self._served: dict[str, dict[str, ResourceInfo]] = {}
        # group_resource -> the resource objects are stored as (for CRDs: the storage version)
        self._storage: dict[str, ResourceInfo] = {}
        self._custom: set[str] = set()
        for info in builtin:
            self._served.setdefault(info.api_version, {})[info.resource] = info
            self._storage.setdefault(info.group_resource, info)

    def discover(self, api_version: str, resource: str) -> ResourceInfo:
        candidates = self._served.get(api_version, {})
        found = candidates.get(resource) or find_resource(list(candidates.values()), resource)
        if found is None:
            raise NotFound(
                f'the server doesn\'t have a resource type "{resource}" in apiVersion '
                f'"{api_version}"'
            )
        return found

    def preferred_version(self, group: str) -> str:
        """The storage version of the group's resources (for a CRD, its storage version), as
        the API server prefers it; NotFound when the group is not served."""
        versions = sorted(
            {info.api_version for info in self._storage.values() if info.group == group}
        )
        if not versions:
            raise NotFound(f"the server could not find the requested resource (group {group!r})")
        return versions[-1]

    def served_resources(self) -> list[ResourceInfo]:
        """Each resource once, in its group's preferred version."""
        out = []
        for _, info in sorted(self._storage.items()):
            preferred = self.preferred_version(info.group)
            served = self._served.get(preferred, {}).get(info.resource)
            out.append(served or info)
        return out

    def served(self, resource: ResourceInfo) -> ResourceInfo:
        """The registered description of a resource a caller names (NotFound when not served,
        e.g. its CRD is gone): the registry, not the caller's copy, is authoritative."""
        found = self._served.get(resource.api_version, {}).get(resource.resource)
        if found is None:
            raise NotFound("the server could not find the requested resource")
        return found

    def storage(self, group_resource: str) -> ResourceInfo | None:
        return self._storage.get(group_resource)

    def is_custom(self, group_resource: str) -> bool:
        return group_resource in self._custom

    def register_custom(self, storage: ResourceInfo, served: list[ResourceInfo]) -> None:
        """Serve a CRD's versions (replacing what it served before). A built-in resource of the
        same name is never shadowed."""
        group_resource = storage.group_resource
        if group_resource in self._storage and group_resource not in self._custom:
            return
        self.unregister_custom(group_resource)
        self._custom.add(group_resource)
        self._storage[group_resource] = storage
        for info in served:
            self._served.setdefault(info.api_version, {})[info.resource] = info

    def unregister_custom(self, group_resource: str) -> None:
        if group_resource not in self._custom:
            return
        self._custom.discard(group_resource)
        del self._storage[group_resource]
        for api_version in list(self._served):
            by_plural = self._served[api_version]
            for plural, info in list(by_plural.items()):
                if info.group_resource == group_resource:
                    del by_plural[plural]
            if not by_plural:
                del self._served[api_version]
